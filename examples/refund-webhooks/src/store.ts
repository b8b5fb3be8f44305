import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { StoreFactory } from "@agboss/core";
import { POSTGRES_URL_ENV, postgresStore } from "@agboss/store-postgres";
import { SQLITE_PATH_ENV, sqliteStore } from "@agboss/store-sqlite";

/** The environment variable naming the Postgres schema the desk's tables live in. */
export const POSTGRES_SCHEMA_ENV = "AGBOSS_POSTGRES_SCHEMA";

/** The schema used when `AGBOSS_POSTGRES_SCHEMA` is not set. */
export const DEFAULT_POSTGRES_SCHEMA = "refund_webhooks";

/**
 * Where the desk keeps its pauses, checkpoints and leases. Every instance given the same choice shares
 * them, so any instance can answer a pause another one asked.
 */
export type StoreChoice =
  /** One SQLite file: one machine, one or more processes. */
  | { readonly kind: "sqlite"; readonly path: string }
  /** One schema of one PostgreSQL database: as many instances as you like, on any machine. */
  | { readonly kind: "postgres"; readonly url: string; readonly schema: string };

/**
 * Reads the store from the environment: `AGBOSS_POSTGRES_URL` set picks Postgres (in
 * `AGBOSS_POSTGRES_SCHEMA`, default `refund_webhooks`); otherwise SQLite at `AGBOSS_SQLITE_PATH`, else
 * `defaultSqlitePath`. An empty variable counts as unset.
 */
export function storeChoiceFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  defaultSqlitePath: string,
): StoreChoice {
  const url = env[POSTGRES_URL_ENV];
  if (url !== undefined && url !== "") {
    return { kind: "postgres", url, schema: env[POSTGRES_SCHEMA_ENV] || DEFAULT_POSTGRES_SCHEMA };
  }
  return { kind: "sqlite", path: env[SQLITE_PATH_ENV] || defaultSqlitePath };
}

/** The factory `createApp` opens the chosen store with. */
export function storeFactoryFor(choice: StoreChoice): StoreFactory {
  switch (choice.kind) {
    case "sqlite": {
      const open = sqliteStore({ path: choice.path });
      return (context) => {
        mkdirSync(dirname(choice.path), { recursive: true });
        return open(context);
      };
    }
    case "postgres":
      return postgresStore({ connectionString: choice.url, schema: choice.schema });
  }
}

/**
 * The store in one line, for the startup banner and logs. A Postgres URL is shown without its password
 * or query parameters (which may carry one): `postgres://app@db.internal:5432/shop, schema refund_webhooks`.
 */
export function describeStore(choice: StoreChoice): string {
  switch (choice.kind) {
    case "sqlite":
      return `sqlite ${choice.path}`;
    case "postgres":
      return `postgres ${withoutSecrets(choice.url)}, schema ${choice.schema}`;
  }
}

function withoutSecrets(connectionString: string): string {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    // Not a URL (a libpq keyword string, a socket path): it may hold a password anywhere.
    return `(the server named by ${POSTGRES_URL_ENV})`;
  }
  const user = url.username === "" ? "" : `${url.username}@`;
  return `${url.protocol}//${user}${url.host}${url.pathname}`;
}
