import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { checkpoint, RICH_JSON, uid, versionsOf } from "./fixtures.js";

/**
 * The checkpointer on the store's backend, unfenced. `@langchain/langgraph-checkpoint-validation`
 * covers LangGraph's contract in depth; these cases pin what the runtime leans on. @internal
 */
export function checkpointerCases({ store, test }: ConformanceContext): void {
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
}
