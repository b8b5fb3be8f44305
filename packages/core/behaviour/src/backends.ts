import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyClass, App, Store } from "@agboss/core";
import { POSTGRES_URL_ENV, type PostgresStore, postgresStore } from "@agboss/store-postgres";
import { sqliteStore } from "@agboss/store-sqlite";
import { type AgbossFixtures, type TestKitOptions, type TestStoreFactory, testWith } from "@agboss/testing";
import { afterAll, describe, onTestFinished, type TestAPI } from "vitest";

/** A store the behaviour tests run on. */
export interface Backend {
  readonly name: string;
  readonly store: TestStoreFactory | undefined;
}

// The SQLite files' directories not removed yet. vitest ends its workers without an exit event, so
// each goes when its test has finished (after the test's fixtures, its apps and their stores, were torn
// down); the exit hook is only a last resort.
const dirs = new Set<string>();
process.on("exit", () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

/** A fresh SQLite file per test, removed with its directory once the test has finished. */
export function sqliteFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "agboss-tests-"));
  dirs.add(dir);
  try {
    onTestFinished(() => removeDir(dir));
  } catch {
    // Not inside a test: made while a test file is collected, it goes after the file's tests.
    afterAll(() => removeDir(dir));
  }
  return join(dir, "agboss.sqlite");
}

export const memoryBackend: Backend = { name: "memory", store: undefined };
export const sqliteBackend: Backend = { name: "sqlite", store: () => sqliteStore({ path: sqliteFile() }) };
export const backends: readonly Backend[] = [memoryBackend, sqliteBackend];

/** The server the Postgres backend runs on: `AGBOSS_POSTGRES_URL`, else the local `test` database. */
export const POSTGRES_TEST_URL = process.env[POSTGRES_URL_ENV] || "postgres://postgres@127.0.0.1:5432/test";

const openedOnPostgres = new WeakMap<Store, PostgresStore>();

/** The Postgres store behind a test's `store` on {@link postgresBackend}: for SQL the Store interface has no call for. */
export function postgresStoreOf(store: Store): PostgresStore {
  const opened = openedOnPostgres.get(store);
  if (opened === undefined) throw new Error("not a store of the Postgres backend");
  return opened;
}

/**
 * A fresh schema per test on {@link POSTGRES_TEST_URL}, dropped when the test's store closes. Not in
 * {@link backends}, to keep the suite's time: a few files that pause and resume across instances opt in
 * through {@link onEachBackendAndPostgres}.
 */
export const postgresBackend: Backend = {
  name: "postgres",
  store: async (context): Promise<Store> => {
    const schema = `agboss_tests_${randomBytes(6).toString("hex")}`;
    const opening = postgresStore({ connectionString: POSTGRES_TEST_URL, schema })(
      context,
    ) as Promise<PostgresStore>;
    const store = await opening.catch((error: unknown) => {
      throw new Error(
        "The Postgres backend needs a running server: start the local one with " +
          "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` " +
          `or set ${POSTGRES_URL_ENV}. ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    });
    const wrapped: Store = {
      name: store.name,
      threads: store.threads,
      executions: store.executions,
      leases: store.leases,
      pauses: store.pauses,
      budgets: store.budgets,
      checkpointer: store.checkpointer,
      atomically: (work) => store.atomically(work),
      recoveryConcurrency: store.recoveryConcurrency,
      async close() {
        try {
          await store.db.schema.dropSchema(schema).ifExists().cascade().execute();
        } finally {
          await store.close();
        }
      },
    };
    openedOnPostgres.set(wrapped, store);
    return wrapped;
  },
};

/** Declares the same tests on every backend. */
export function onEachBackend(
  application: AnyClass,
  body: (test: TestAPI<AgbossFixtures>, backend: Backend) => void,
  options: TestKitOptions = {},
  only: readonly Backend[] = backends,
): void {
  for (const backend of only) {
    describe(`on the ${backend.name} store`, () => {
      body(
        testWith(application, {
          ...options,
          ...(backend.store === undefined ? {} : { store: backend.store }),
        }),
        backend,
      );
    });
  }
}

/** Declares the same tests on every backend and on Postgres. */
export function onEachBackendAndPostgres(
  application: AnyClass,
  body: (test: TestAPI<AgbossFixtures>, backend: Backend) => void,
  options: TestKitOptions = {},
): void {
  onEachBackend(application, body, options, [...backends, postgresBackend]);
}

/** The pause record and the thread's checkpoint, as stored: to prove bad input changed nothing. */
export async function frozen(
  store: Store,
  tenantId: string,
  pauseId: string,
  threadKey: string,
): Promise<string> {
  const pause = await store.pauses.findByTenantIdAndPauseId(tenantId, pauseId);
  const tuple = await store.checkpointer.getTuple({ configurable: { thread_id: threadKey } });
  const writes = JSON.stringify(tuple?.pendingWrites ?? []);
  return JSON.stringify({ pause, checkpoint: tuple?.checkpoint, writes, parent: tuple?.parentConfig });
}

/** Every app's singleton of `cls`, for counting what ran where. */
export function allOf<T>(apps: readonly App[], cls: AnyClass<T>): T[] {
  return apps.map((a) => a.get(cls));
}
