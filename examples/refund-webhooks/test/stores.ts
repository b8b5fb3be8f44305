import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { POSTGRES_URL_ENV, PostgresStore } from "@agboss/store-postgres";
import { describeStore, type StoreChoice } from "../src/store.js";

/** The server the Postgres tests run on: `AGBOSS_POSTGRES_URL`, else the local `test` database. */
export const POSTGRES_TEST_URL = process.env[POSTGRES_URL_ENV] || "postgres://postgres@127.0.0.1:5432/test";

/** What to do when PostgreSQL cannot be reached. */
export const START_POSTGRES =
  "These tests need a running PostgreSQL server. Start the local one with " +
  "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`, " +
  `or point ${POSTGRES_URL_ENV} at a server where the tests may create and drop schemas.`;

/** The stores the tests run the desk on. */
export type StoreKind = StoreChoice["kind"];
export const STORE_KINDS: readonly StoreKind[] = ["sqlite", "postgres"];

/** A store of its own for one group of tests, and how to remove it afterwards. */
export interface TestStore {
  readonly choice: StoreChoice;
  /** Deletes the SQLite file's directory, or drops the Postgres schema with everything in it. */
  dispose(): Promise<void>;
}

/** A SQLite file in a fresh directory. */
export function sqliteTestStore(): TestStore {
  const dir = mkdtempSync(join(tmpdir(), "agboss-refund-webhooks-"));
  return {
    choice: { kind: "sqlite", path: join(dir, "desk.sqlite") },
    dispose: () => {
      rmSync(dir, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

/**
 * A fresh schema on {@link POSTGRES_TEST_URL}. The schema is created and migrated here, which also
 * checks that the server is up (failing with {@link START_POSTGRES} when it is not); `dispose` drops it.
 */
export async function postgresTestStore(): Promise<TestStore> {
  const choice: StoreChoice = {
    kind: "postgres",
    url: POSTGRES_TEST_URL,
    schema: `refund_webhooks_t_${randomBytes(6).toString("hex")}`,
  };
  const store = await PostgresStore.open({ connectionString: choice.url, schema: choice.schema }).catch(
    (error: unknown) => {
      throw new Error(
        `Cannot open the store ${describeStore(choice)}. ${START_POSTGRES}\n${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    },
  );
  return {
    choice,
    async dispose() {
      try {
        await store.db.schema.dropSchema(choice.schema).ifExists().cascade().execute();
      } finally {
        await store.close();
      }
    },
  };
}

export function openTestStore(kind: StoreKind): Promise<TestStore> {
  return kind === "sqlite" ? Promise.resolve(sqliteTestStore()) : postgresTestStore();
}
