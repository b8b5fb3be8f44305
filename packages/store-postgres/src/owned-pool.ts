import pg from "pg";

/** What the store needs to open a pool of its own. @internal */
export interface OwnedPoolOptions {
  readonly connectionString: string;
  readonly appName: string | undefined;
  readonly maxConnections: number | undefined;
  readonly connectTimeoutMs: number | undefined;
}

/**
 * Opens the pool a store owns: `bigint` columns come back as numbers (epochs, counters and epoch
 * milliseconds all fit in a double). The store watches it for lost and silent connections (`watchPool`,
 * `watchStalls`, which also sets the session idle timeout). Each connection has TCP keepalive on, so
 * that the operating system notices a peer gone while the connection idles in the pool. @internal
 */
export function openOwnedPool(options: OwnedPoolOptions): pg.Pool {
  return new pg.Pool({
    connectionString: options.connectionString,
    application_name: options.appName === undefined ? "agboss" : `agboss:${options.appName}`.slice(0, 63),
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: { getTypeParser: typeParser as typeof pg.types.getTypeParser },
  });
}

function typeParser(oid: number, format?: "text" | "binary"): unknown {
  if (oid === pg.types.builtins.INT8 && format !== "binary") return parseInt8;
  return format === undefined ? pg.types.getTypeParser(oid) : pg.types.getTypeParser(oid, format);
}

/** A number when it fits exactly; a bigint, never a rounded number, when it does not. */
function parseInt8(text: string): number | bigint {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : BigInt(text);
}
