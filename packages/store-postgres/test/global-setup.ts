import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * Fails the whole run, saying how to start the server, when PostgreSQL cannot be reached; drops every
 * schema the run's tests left behind when it ends.
 */
export default async function setup(): Promise<() => Promise<void>> {
  process.env.AGBOSS_TEST_RUN ??= randomBytes(4).toString("hex");
  // Imported after the run id is set: the helper reads it once.
  const { SCHEMA_PREFIX, withClient } = await import("./postgres-server.js");
  await withClient((client) => client.query("select 1"));
  return () =>
    withClient(async (client) => {
      const { rows } = await client.query<{ nspname: string }>(
        "select nspname from pg_namespace where starts_with(nspname, $1)",
        [SCHEMA_PREFIX],
      );
      for (const { nspname } of rows) {
        await client.query(`drop schema if exists ${pg.escapeIdentifier(nspname)} cascade`);
      }
    });
}
