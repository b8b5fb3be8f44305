import { randomUUID } from "node:crypto";
import { CHECKPOINT_HISTORY_CONFIG_KEY } from "@agboss/core/store";
import { expect, test } from "vitest";
import type { KyselyStore } from "../src/index.js";
import { checkpoint, META } from "./test-checkpoints.js";

// What a put that keeps only the latest checkpoint leaves in the tables, against one that keeps history,
// on a real database of each dialect (the store tests of each package run these).

function config(threadId: string, namespace: string, latestOnly: boolean, checkpointId?: string) {
  return {
    configurable: {
      thread_id: threadId,
      checkpoint_ns: namespace,
      ...(checkpointId === undefined ? {} : { checkpoint_id: checkpointId }),
      ...(latestOnly ? { [CHECKPOINT_HISTORY_CONFIG_KEY]: "latest" } : {}),
    },
  };
}

/**
 * Three checkpoints in a chain on `namespace`: c1 writes a and b, c2 writes a again, c3 empties b and
 * writes c; each gets one pending write. Returns the three ids.
 */
async function chain(store: KyselyStore, threadId: string, namespace: string, latestOnly: boolean) {
  const saver = store.checkpointer;
  const c1 = checkpoint({ a: "a1", b: "b1" }, { a: 1, b: 1 });
  let saved = await saver.put(config(threadId, namespace, latestOnly), c1, META, { a: 1, b: 1 });
  await saver.putWrites(saved, [["a", "write on c1"]], "task-1");
  const c2 = checkpoint({ a: "a2", b: "b1" }, { a: 2, b: 1 });
  saved = await saver.put(config(threadId, namespace, latestOnly, c1.id), c2, META, { a: 2 });
  await saver.putWrites(saved, [["a", "write on c2"]], "task-2");
  const c3 = checkpoint({ a: "a2", c: "c3" }, { a: 2, b: 2, c: 1 });
  saved = await saver.put(config(threadId, namespace, latestOnly, c2.id), c3, META, { b: 2, c: 1 });
  await saver.putWrites(saved, [["c", "write on c3"]], "task-3");
  return [c1.id, c2.id, c3.id] as const;
}

async function rows(store: KyselyStore, threadId: string) {
  const db = store.db;
  const checkpoints = await db
    .selectFrom("agboss_checkpoints")
    .select(["checkpoint_ns", "checkpoint_id"])
    .where("thread_id", "=", threadId)
    .orderBy("checkpoint_ns")
    .orderBy("checkpoint_id")
    .execute();
  const blobs = await db
    .selectFrom("agboss_checkpoint_blobs")
    .select(["checkpoint_ns", "checkpoint_id", "channel"])
    .where("thread_id", "=", threadId)
    .orderBy("checkpoint_ns")
    .orderBy("checkpoint_id")
    .orderBy("channel")
    .execute();
  const writes = await db
    .selectFrom("agboss_checkpoint_writes")
    .select(["checkpoint_ns", "checkpoint_id", "task_id"])
    .where("thread_id", "=", threadId)
    .orderBy("checkpoint_ns")
    .orderBy("checkpoint_id")
    .execute();
  return { checkpoints, blobs, writes };
}

async function listed(store: KyselyStore, threadId: string) {
  const ids: string[] = [];
  for await (const tuple of store.checkpointer.list({ configurable: { thread_id: threadId } }))
    ids.push(`${tuple.config.configurable?.checkpoint_ns}|${tuple.checkpoint.id}`);
  return ids.sort();
}

/** Declares the checkpoint-history tests on the store `open` gives (a fresh one per test, closed by `close`). */
export function checkpointHistoryCases(
  open: () => Promise<KyselyStore>,
  close: (store: KyselyStore) => Promise<void>,
) {
  const withStore = (body: (store: KyselyStore) => Promise<void>) => async () => {
    const store = await open();
    try {
      await body(store);
    } finally {
      await close(store);
    }
  };

  test(
    "a put asking for the latest checkpoint only deletes the ones it supersedes, their writes and the values no longer reached, in its namespace alone",
    withStore(async (store) => {
      const threadId = `latest-${randomUUID()}`;
      const [sub1, sub2] = await (async () => {
        const s1 = checkpoint({ a: "s1" }, { a: 1 });
        const saved = await store.checkpointer.put(config(threadId, "branch:1", true), s1, META, { a: 1 });
        await store.checkpointer.putWrites(saved, [["a", "sub write"]], "task-s");
        const s2 = checkpoint({ a: "s1", d: "s2" }, { a: 1, d: 1 });
        await store.checkpointer.put(config(threadId, "branch:1", true, s1.id), s2, META, { d: 1 });
        return [s1.id, s2.id] as const;
      })();
      const [c1, c2, c3] = await chain(store, threadId, "", true);

      const latest = await store.checkpointer.getTuple(config(threadId, "", false));
      expect(latest?.checkpoint.id).toBe(c3);
      // a comes from c2's row, c from c3's; b was emptied by c3.
      expect(latest?.checkpoint.channel_values).toEqual({ a: "a2", c: "c3" });
      expect(latest?.pendingWrites).toEqual([["task-3", "c", "write on c3"]]);
      expect(latest?.parentConfig?.configurable?.checkpoint_id).toBe(c2);
      expect(await store.checkpointer.getTuple(config(threadId, "", false, c1))).toBeUndefined();
      expect(await store.checkpointer.getTuple(config(threadId, "", false, c2))).toBeUndefined();
      const sub = await store.checkpointer.getTuple(config(threadId, "branch:1", false));
      expect(sub?.checkpoint.id).toBe(sub2);
      expect(sub?.checkpoint.channel_values).toEqual({ a: "s1", d: "s2" });
      expect(sub?.pendingWrites).toEqual([]);

      expect(await listed(store, threadId)).toEqual([`|${c3}`, `branch:1|${sub2}`].sort());
      const stored = await rows(store, threadId);
      expect(stored.checkpoints).toEqual([
        { checkpoint_ns: "", checkpoint_id: c3 },
        { checkpoint_ns: "branch:1", checkpoint_id: sub2 },
      ]);
      expect(stored.blobs).toEqual([
        { checkpoint_ns: "", checkpoint_id: c2, channel: "a" },
        { checkpoint_ns: "", checkpoint_id: c3, channel: "c" },
        { checkpoint_ns: "branch:1", checkpoint_id: sub1, channel: "a" },
        { checkpoint_ns: "branch:1", checkpoint_id: sub2, channel: "d" },
      ]);
      expect(stored.writes).toEqual([{ checkpoint_ns: "", checkpoint_id: c3, task_id: "task-3" }]);
    }),
  );

  test(
    "a checkpoint's row names its own id once: not in its serialised checkpoint, not in its channel origins",
    withStore(async (store) => {
      const threadId = `once-${randomUUID()}`;
      const [, c2, c3] = await chain(store, threadId, "", true);
      const row = await store.db
        .selectFrom("agboss_checkpoints")
        .select(["checkpoint", "channel_origins"])
        .where("thread_id", "=", threadId)
        .executeTakeFirstOrThrow();
      expect(Buffer.from(row.checkpoint as Uint8Array).toString("utf8")).not.toContain(c3);
      expect(JSON.parse(row.channel_origins)).toEqual({ a: c2, c: "" });
      const latest = await store.checkpointer.getTuple(config(threadId, "", false));
      expect(latest?.checkpoint.id).toBe(c3);
      expect(latest?.config.configurable?.checkpoint_id).toBe(c3);
    }),
  );

  test(
    "rows written with the id in full (the earlier format) read back the same",
    withStore(async (store) => {
      const threadId = `earlier-${randomUUID()}`;
      const [c1, c2, c3] = await chain(store, threadId, "", false);
      const serde = store.checkpointer.serde;
      for (const id of [c1, c2, c3]) {
        const before = await store.checkpointer.getTuple(config(threadId, "", false, id));
        const row = await store.db
          .selectFrom("agboss_checkpoints")
          .select("channel_origins")
          .where("thread_id", "=", threadId)
          .where("checkpoint_id", "=", id)
          .executeTakeFirstOrThrow();
        const origins = JSON.parse(row.channel_origins) as Record<string, string>;
        for (const channel of Object.keys(origins)) if (origins[channel] === "") origins[channel] = id;
        const [, bytes] = await serde.dumpsTyped({ ...before?.checkpoint, channel_values: {} });
        await store.db
          .updateTable("agboss_checkpoints")
          .set({ checkpoint: bytes, channel_origins: JSON.stringify(origins) })
          .where("thread_id", "=", threadId)
          .where("checkpoint_id", "=", id)
          .execute();
        expect(await store.checkpointer.getTuple(config(threadId, "", false, id))).toEqual(before);
      }
      // A put after such a row carries its origins on.
      const c4 = checkpoint({ a: "a2", c: "c3", e: "e4" }, { a: 2, b: 2, c: 1, e: 1 });
      await store.checkpointer.put(config(threadId, "", true, c3), c4, META, { e: 1 });
      const latest = await store.checkpointer.getTuple(config(threadId, "", false));
      expect(latest?.checkpoint.channel_values).toEqual({ a: "a2", c: "c3", e: "e4" });
    }),
  );

  test(
    "a put does not wait to be called after the step's pending writes: the writes begun before it are deleted too, none left behind",
    withStore(async (store) => {
      // As LangGraph calls them: a step's pending writes on checkpoint N, and the put of N+1 right
      // behind them, without waiting. On a pool the two could otherwise land in either order.
      for (let round = 0; round < 20; round += 1) {
        const threadId = `unawaited-${randomUUID()}`;
        const saver = store.checkpointer;
        const c1 = checkpoint({ a: "a1" }, { a: 1 });
        const saved = await saver.put(config(threadId, "", true), c1, META, { a: 1 });
        const writes = [
          saver.putWrites(saved, [["a", "from task 1"]], "task-1"),
          saver.putWrites(saved, [["a", "from task 2"]], "task-2"),
        ];
        const c2 = checkpoint({ a: "a2" }, { a: 2 });
        const putting = saver.put(config(threadId, "", true, c1.id), c2, META, { a: 2 });
        await Promise.all([...writes, putting]);
        const stored = await rows(store, threadId);
        expect(stored.checkpoints).toEqual([{ checkpoint_ns: "", checkpoint_id: c2.id }]);
        expect(stored.writes).toEqual([]);
      }
    }),
  );

  test(
    "a put deletes nothing newer than itself: the next checkpoint's writes, landed before it, stay",
    withStore(async (store) => {
      // LangGraph chains its puts but not the next step's writes: those may land before the put of the
      // checkpoint before them.
      const threadId = `newer-${randomUUID()}`;
      const saver = store.checkpointer;
      const c0 = checkpoint({ a: "a0" }, { a: 1 });
      await saver.put(config(threadId, "", true), c0, META, { a: 1 });
      const c1 = checkpoint({ a: "a1" }, { a: 2 });
      const c2 = checkpoint({ a: "a2" }, { a: 3 });
      await saver.putWrites(config(threadId, "", true, c2.id), [["__interrupt__", "asked on c2"]], "task-2");
      await saver.put(config(threadId, "", true, c0.id), c1, META, { a: 2 });
      expect((await rows(store, threadId)).writes).toEqual([
        { checkpoint_ns: "", checkpoint_id: c2.id, task_id: "task-2" },
      ]);
      await saver.put(config(threadId, "", true, c1.id), c2, META, { a: 3 });
      const latest = await saver.getTuple(config(threadId, "", true));
      expect(latest?.checkpoint.id).toBe(c2.id);
      expect(latest?.pendingWrites).toEqual([["task-2", "__interrupt__", "asked on c2"]]);
    }),
  );

  test(
    "a put without it keeps the whole history, and stores no row for a channel it empties",
    withStore(async (store) => {
      const threadId = `history-${randomUUID()}`;
      const [c1, c2, c3] = await chain(store, threadId, "", false);
      expect(await listed(store, threadId)).toEqual([`|${c1}`, `|${c2}`, `|${c3}`]);
      const first = await store.checkpointer.getTuple(config(threadId, "", false, c1));
      expect(first?.checkpoint.channel_values).toEqual({ a: "a1", b: "b1" });
      expect(first?.pendingWrites).toEqual([["task-1", "a", "write on c1"]]);
      const second = await store.checkpointer.getTuple(config(threadId, "", false, c2));
      expect(second?.checkpoint.channel_values).toEqual({ a: "a2", b: "b1" });
      const latest = await store.checkpointer.getTuple(config(threadId, "", false));
      expect(latest?.checkpoint.channel_values).toEqual({ a: "a2", c: "c3" });
      const stored = await rows(store, threadId);
      expect(stored.checkpoints).toHaveLength(3);
      expect(stored.writes).toHaveLength(3);
      expect(stored.blobs).toEqual([
        { checkpoint_ns: "", checkpoint_id: c1, channel: "a" },
        { checkpoint_ns: "", checkpoint_id: c1, channel: "b" },
        { checkpoint_ns: "", checkpoint_id: c2, channel: "a" },
        { checkpoint_ns: "", checkpoint_id: c3, channel: "c" },
      ]);
    }),
  );
}
