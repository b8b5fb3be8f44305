import { KEEP_READ_CONFIG_KEY, KEPT_READ_CONFIG_KEY, readAheadOf } from "@agboss/core/store";
import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { checkpoint, RICH_JSON, uid, versionsOf } from "./fixtures.js";

/**
 * The checkpointer on the store's backend, unfenced. `@langchain/langgraph-checkpoint-validation`
 * covers LangGraph's contract in depth; these cases pin what the runtime leans on. @internal
 */
export function checkpointerCases({ store, test }: ConformanceContext): void {
  /** Puts `first` as a thread's first checkpoint (root namespace); returns the config put gave back. */
  const putFirst = (threadId: string, first: ReturnType<typeof checkpoint>) =>
    store().checkpointer.put(
      { configurable: { thread_id: threadId, checkpoint_ns: "" } },
      first,
      { source: "input", step: -1, parents: {} },
      versionsOf(first),
    );

  test("checkpointer: put then getTuple returns the checkpoint, its metadata, parent and writes", async () => {
    const threadId = uid("thread");
    const first = checkpoint({ messages: ["hi"], state: RICH_JSON });
    const saved = await store().checkpointer.put(
      { configurable: { thread_id: threadId, checkpoint_ns: "" } },
      first,
      { source: "input", step: -1, parents: {} },
      versionsOf(first),
    );
    expect(saved.configurable).toMatchObject({
      thread_id: threadId,
      checkpoint_ns: "",
      checkpoint_id: first.id,
    });
    const second = checkpoint({ messages: ["hi", "there"], state: RICH_JSON });
    second.channel_versions = { messages: 2, state: 1 };
    const savedSecond = await store().checkpointer.put(
      saved,
      second,
      { source: "loop", step: 0, parents: {} },
      {
        messages: 2,
      },
    );
    await store().checkpointer.putWrites(savedSecond, [["messages", "next"]], "task-1");

    const latest = await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, checkpoint_ns: "" },
    });
    expect(latest?.checkpoint).toEqual(second);
    expect(latest?.metadata).toEqual({ source: "loop", step: 0, parents: {} });
    expect(latest?.parentConfig?.configurable?.checkpoint_id).toBe(first.id);
    expect(latest?.pendingWrites).toEqual([["task-1", "messages", "next"]]);
    expect((await store().checkpointer.getTuple(saved))?.checkpoint).toEqual(first);
  });

  test("checkpointer: deleteThread removes one thread only", async () => {
    const [one, two] = [uid("thread"), uid("thread")];
    for (const threadId of [one, two]) {
      const c = checkpoint();
      await store().checkpointer.put(
        { configurable: { thread_id: threadId } },
        c,
        { source: "input", step: -1, parents: {} },
        versionsOf(c),
      );
    }
    await store().checkpointer.deleteThread(one);
    expect(await store().checkpointer.getTuple({ configurable: { thread_id: one } })).toBeUndefined();
    expect(await store().checkpointer.getTuple({ configurable: { thread_id: two } })).toBeDefined();
  });

  test("checkpointer: a read kept for the next one gives that one the checkpoint as stored", async () => {
    const threadId = uid("thread");
    const first = checkpoint({ messages: ["hi"], state: RICH_JSON });
    const saved = await putFirst(threadId, first);
    await store().checkpointer.putWrites(saved, [["messages", "next"]], "task-1");
    const token = uid("read");
    const read = await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, [KEEP_READ_CONFIG_KEY]: token },
    });
    // Another thread, or another namespace of the same thread, never gets it.
    const other = await store().checkpointer.getTuple({
      configurable: { thread_id: uid("thread"), [KEPT_READ_CONFIG_KEY]: token },
    });
    expect(other).toBeUndefined();
    const subgraph = await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, checkpoint_ns: "child", [KEPT_READ_CONFIG_KEY]: token },
    });
    expect(subgraph).toBeUndefined();
    const again = await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, checkpoint_ns: "", [KEPT_READ_CONFIG_KEY]: token },
    });
    expect(again?.checkpoint).toEqual(first);
    expect(again?.pendingWrites).toEqual([["task-1", "messages", "next"]]);
    expect(again).toEqual(read);
  });

  test("checkpointer: a thread deleted after a kept read is gone for the next read", async () => {
    const threadId = uid("thread");
    const first = checkpoint({ messages: ["hi"] });
    await putFirst(threadId, first);
    const token = uid("read");
    await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, [KEEP_READ_CONFIG_KEY]: token },
    });
    await store().checkpointer.deleteThread(threadId);
    expect(
      await store().checkpointer.getTuple({
        configurable: { thread_id: threadId, [KEPT_READ_CONFIG_KEY]: token },
      }),
    ).toBeUndefined();
  });

  test("checkpointer: a read ahead (where the checkpointer offers one) is what the read naming it gets, until the thread is written", async () => {
    const threadId = uid("thread");
    const first = checkpoint({ messages: ["hi"] });
    const saved = await putFirst(threadId, first);
    await store().checkpointer.putWrites(saved, [["messages", "next"]], "task-1");
    const ahead = readAheadOf(store().checkpointer, threadId);
    // A checkpointer without reads ahead: the pass reads for itself, which the other cases cover.
    if (ahead === undefined) return;
    await ahead.done;
    const taken = await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, [KEPT_READ_CONFIG_KEY]: ahead.token },
    });
    expect(taken?.checkpoint).toEqual(first);
    expect(taken?.pendingWrites).toEqual([["task-1", "messages", "next"]]);

    const later = readAheadOf(store().checkpointer, threadId);
    await later?.done;
    const second = checkpoint({ messages: ["hi", "there"] });
    second.channel_versions = { messages: 2 };
    await store().checkpointer.put(saved, second, { source: "loop", step: 0, parents: {} }, { messages: 2 });
    const afterPut = await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, [KEPT_READ_CONFIG_KEY]: later?.token },
    });
    expect(afterPut?.checkpoint).toEqual(second);
  });

  test("checkpointer: a write after a kept read is what the next read sees", async () => {
    const threadId = uid("thread");
    const first = checkpoint({ messages: ["hi"] });
    const saved = await putFirst(threadId, first);
    const [afterWrites, afterPut] = [uid("read"), uid("read")];
    await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, [KEEP_READ_CONFIG_KEY]: afterWrites },
    });
    await store().checkpointer.putWrites(saved, [["messages", "next"]], "task-1");
    const withWrites = await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, [KEPT_READ_CONFIG_KEY]: afterWrites },
    });
    expect(withWrites?.pendingWrites).toEqual([["task-1", "messages", "next"]]);

    await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, [KEEP_READ_CONFIG_KEY]: afterPut },
    });
    const second = checkpoint({ messages: ["hi", "there"] });
    second.channel_versions = { messages: 2 };
    await store().checkpointer.put(saved, second, { source: "loop", step: 0, parents: {} }, { messages: 2 });
    const latest = await store().checkpointer.getTuple({
      configurable: { thread_id: threadId, [KEPT_READ_CONFIG_KEY]: afterPut },
    });
    expect(latest?.checkpoint).toEqual(second);
  });
}
