import { describe, expect, test } from "vitest";
import type { ExecutionOutput } from "../../src/execution/execution-output.js";
import { ExecutionStream, type ExecutionStreamEvent } from "../../src/execution/execution-stream.js";
import { ExecutionStatus } from "../../src/records/execution-status.js";

const ids = { executionId: "e-1", rootExecutionId: "e-1", threadId: "t-1", at: "2026-01-01T00:00:00.000Z" };
const output: ExecutionOutput = {
  status: ExecutionStatus.Completed,
  output: { text: "done" },
  threadId: "t-1",
  executionId: "e-1",
  pending: [],
};
const now = () => "2026-01-01T00:00:01.000Z";

/** A run that tells `count` text pieces, yielding to the event loop now and then, and completes. */
function pieces(count: number) {
  return new ExecutionStream(async (listen) => {
    const started: ExecutionStreamEvent = { ...ids, type: "execution.started", workflow: "w" };
    listen(started);
    for (let i = 0; i < count; i += 1) {
      const piece: ExecutionStreamEvent = {
        ...ids,
        type: "model.text",
        caller: "agent:a",
        model: "m",
        text: String(i),
      };
      listen(piece);
      if (i % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    return output;
  }, now);
}

describe("ExecutionStream", () => {
  test("every event is read in order, however far the reader lags, and the rest comes last", async () => {
    const stream = pieces(3_000);
    await stream.result; // the reader starts after the whole run: 3,002 events queued
    const seen: ExecutionStreamEvent[] = [];
    for await (const event of stream) seen.push(event);
    expect(seen).toHaveLength(3_002);
    expect(seen[0]?.type).toBe("execution.started");
    expect(seen.slice(1, -1).map((e) => (e.type === "model.text" ? e.text : ""))).toEqual(
      Array.from({ length: 3_000 }, (_, i) => String(i)),
    );
    expect(seen.at(-1)).toEqual({ ...ids, at: now(), type: "execution.finished", output });
  });

  test("a reader that keeps up reads each event as it comes", async () => {
    const stream = pieces(2_100);
    let count = 0;
    for await (const _ of stream) count += 1;
    expect(count).toBe(2_102);
  });

  test("a run that throws at once streams execution.failed with empty ids, and the loop and result throw it", async () => {
    const failure = new Error("refused");
    const stream = new ExecutionStream(() => {
      throw failure;
    }, now);
    const seen: ExecutionStreamEvent[] = [];
    const thrown = await (async () => {
      for await (const event of stream) seen.push(event);
    })().catch((e: unknown) => e);
    expect(thrown).toBe(failure);
    await expect(stream.result).rejects.toBe(failure);
    expect(seen).toEqual([
      {
        executionId: "",
        rootExecutionId: "",
        threadId: "",
        at: now(),
        type: "execution.failed",
        error: { name: "Error", code: undefined, message: "refused" },
      },
    ]);
  });

  test("it is iterated once; leaving the loop early leaves the run to finish", async () => {
    const stream = pieces(10);
    for await (const event of stream) if (event.type === "execution.started") break;
    expect(await stream.result).toBe(output);
    await expect(
      (async () => {
        for await (const _ of stream) break;
      })(),
    ).rejects.toThrow("iterated once");
  });
});
