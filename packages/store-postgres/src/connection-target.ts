import type { PostgresPool } from "kysely";

/**
 * Names the server and database a store runs on, without credentials, for the store's name and its
 * errors: `127.0.0.1:5432/refunds`. @internal
 */
export function connectionTarget(
  connectionString: string | undefined,
  pool: PostgresPool | undefined,
): string {
  if (connectionString !== undefined) {
    try {
      const url = new URL(connectionString);
      const database = decodeURIComponent(url.pathname.replace(/^\//, ""));
      return `${url.host || "localhost"}/${database}`;
    } catch {
      return "the configured server";
    }
  }
  const options = (pool?.options ?? {}) as { host?: unknown; port?: unknown; database?: unknown };
  if (typeof options.host === "string" || typeof options.database === "string") {
    const port =
      typeof options.port === "number" || typeof options.port === "string" ? `:${options.port}` : "";
    return `${String(options.host ?? "localhost")}${port}/${String(options.database ?? "")}`;
  }
  return "the given pool";
}
