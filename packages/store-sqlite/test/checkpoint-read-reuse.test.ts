import { randomUUID } from "node:crypto";
import { CHECKPOINT_HISTORY_CONFIG_KEY, FENCE_CONFIG_KEY, type Fence } from "@agboss/core/store";
import type { Checkpoint } from "@langchain/langgraph-checkpoint";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { type SqliteHandle, SqliteStore } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

// A pass reads its tree's latest checkpoint to find what to resume, and LangGraph reads it again at the
// start of invoke: the second read is built from the rows of the first, unless anything was written.

const dir = tempDir();
afterAll(() => dir.dispose());

/** A better-sqlite3 handle that counts the statements reading agboss_checkpoints. */
function countingReads(path: string): { handle: SqliteHandle; reads: () => number; close(): void } {
  const db = new Database(path);
  let reads = 0;
  const handle = {
    name: db.name,
    pragma: (source: string, options?: { simple?: boolean }) => db.pragma(source, options),
    close: () => db.close(),
    prepare: (sql: string) => {
      const statement = db.prepare(sql);
      if (!/^select .* from "agboss_checkpoints"/i.test(sql.trim())) return statement;
      return {
        reader: statement.reader,
        all: (parameters: readonly unknown[]) => {
          reads += 1;
          return statement.all(...parameters);
        },
        run: (parameters: readonly unknown[]) => statement.run(...parameters),
      };
    },
  } as unknown as SqliteHandle;
  return { handle, reads: () => reads, close: () => db.close() };
}

function checkpoint(values: Record<string, unknown>): Checkpoint {
  return {
    v: 4,
    id: `${Date.now()}-${randomUUID()}`,
    ts: new Date().toISOString(),
    channel_values: values,
    channel_versions: Object.fromEntries(Object.keys(values).map((k) => [k, 1])),
    versions_seen: {},
  };
}

/** The config a pass reads and writes its tree with (fenced, latest checkpoint only), or a plain one. */
function config(threadId: string, fence?: Fence, checkpointId?: string) {
  return {
    configurable: {
      thread_id: threadId,
      checkpoint_ns: "",
      ...(checkpointId === undefined ? {} : { checkpoint_id: checkpointId }),
      ...(fence === undefined
        ? {}
        : { [FENCE_CONFIG_KEY]: fence, [CHECKPOINT_HISTORY_CONFIG_KEY]: "latest" }),
    },
  };
}

async function open() {
  const counting = countingReads(dir.file(`${randomUUID()}.sqlite`));
  const store = await SqliteStore.open({ database: counting.handle });
  const key = `tree-${randomUUID()}`;
  const lease = (await store.leases.acquire({ key, holder: "a", now: 1_000, ttlMs: 30_000 })) as Fence;
  const saved = await store.checkpointer.put(config(key, lease), checkpoint({ a: "one" }), meta(), { a: 1 });
  await store.checkpointer.putWrites(saved, [["a", "pending"]], "task-1");
  const close = async () => {
    await store.close();
    counting.close();
  };
  return { store, key, lease, reads: counting.reads, close };
}

function meta() {
  return { source: "loop" as const, step: 1, parents: {} };
}

describe("a pass's second read of its latest checkpoint", () => {
  test("is built from the first read's rows: the same tuple, without reading the table again", async () => {
    const { store, key, lease, reads, close } = await open();
    const first = await store.checkpointer.getTuple(config(key, lease));
    const before = reads();
    const second = await store.checkpointer.getTuple(config(key, lease));
    expect(reads() - before).toBe(0);
    expect(second).toEqual(first);
    expect(second?.pendingWrites).toEqual([["task-1", "a", "pending"]]);
    // Used once: a third read goes to the table.
    await store.checkpointer.getTuple(config(key, lease));
    expect(reads() - before).toBe(1);
    await close();
  });

  test("is read from the table again after the pass wrote to the thread, and sees the write", async () => {
    const { store, key, lease, reads, close } = await open();
    const first = await store.checkpointer.getTuple(config(key, lease));
    await store.checkpointer.putWrites(
      config(key, lease, first?.checkpoint.id),
      [["a", "written after the read"]],
      "task-2",
    );
    const before = reads();
    const second = await store.checkpointer.getTuple(config(key, lease));
    expect(reads() - before).toBe(1);
    expect(second?.pendingWrites).toContainEqual(["task-2", "a", "written after the read"]);
    await close();
  });

  test("is not reused by another holder of the lease, nor by a read without a fence", async () => {
    const { store, key, lease, reads, close } = await open();
    await store.checkpointer.getTuple(config(key, lease));
    const newer = (await store.leases.acquire({ key, holder: "b", now: 40_000, ttlMs: 30_000 })) as Fence;
    expect(newer.epoch).toBeGreaterThan(lease.epoch);
    let before = reads();
    await store.checkpointer.getTuple(config(key, newer));
    expect(reads() - before).toBe(1);
    await store.checkpointer.getTuple(config(key));
    before = reads();
    await store.checkpointer.getTuple(config(key));
    expect(reads() - before).toBe(1);
    await close();
  });
});
