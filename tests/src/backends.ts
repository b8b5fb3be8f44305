import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyClass, App, Store } from "@agboss/core";
import { sqliteStore } from "@agboss/store-sqlite";
import { type AgbossFixtures, type TestKitOptions, type TestStoreFactory, testWith } from "@agboss/testing";
import { describe, type TestAPI } from "vitest";

/** A store the behaviour tests run on. */
export interface Backend {
  readonly name: string;
  readonly store: TestStoreFactory | undefined;
}

const dirs: string[] = [];
process.on("exit", () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh SQLite file per test. */
export function sqliteFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "agboss-tests-"));
  dirs.push(dir);
  return join(dir, "agboss.sqlite");
}

export const memoryBackend: Backend = { name: "memory", store: undefined };
export const sqliteBackend: Backend = { name: "sqlite", store: () => sqliteStore({ path: sqliteFile() }) };
export const backends: readonly Backend[] = [memoryBackend, sqliteBackend];

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
