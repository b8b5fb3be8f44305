import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Instance, openTestStore, STORE_KINDS, startInstance, type TestStore } from "./harness.js";

// Accept: text/event-stream on a start or an answer: the run's events as server-sent events, its rest
// last, over a real loopback server.

const DANA = "acme:owner:dana";

/** Posts with `Accept: text/event-stream` and reads the whole response. */
async function post(base: string, path: string, body: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${DANA}`,
      "content-type": "application/json",
      accept: "text/event-stream",
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() };
}

/** The server-sent events of a body: each `event:` with its parsed `data:`. */
function eventsOf(text: string): { type: string; data: Record<string, unknown> }[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const type = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "";
      const data = lines.find((l) => l.startsWith("data: "))?.slice(6) ?? "{}";
      return { type, data: JSON.parse(data) as Record<string, unknown> };
    });
}

for (const kind of STORE_KINDS) {
  describe(`server-sent events on ${kind}`, () => {
    let store: TestStore;
    let a: Instance;
    beforeAll(async () => {
      store = await openTestStore(kind);
      a = await startInstance(store);
    });
    afterAll(async () => {
      await a?.close();
      await store?.dispose();
    });

    test("a start streams its steps and rests paused; the answer streams from the answer to the finish", async () => {
      const started = await post(a.url, "/starts/desk-workflow-start", {
        input: { text: "confirm o9 900" },
        threadId: "order:o9",
      });
      expect(started.status).toBe(200);
      expect(started.contentType).toContain("text/event-stream");
      const first = eventsOf(started.text);
      expect(first.map((e) => e.type)).toEqual([
        "execution.started",
        "model.turn",
        "pause.asked",
        "execution.paused",
      ]);
      expect(first[0]?.data).toMatchObject({ type: "execution.started", threadId: "order:o9" });
      const rest = first.at(-1)?.data.output as { status: string; pending: { pauseId?: string }[] };
      expect(rest.status).toBe("paused");
      const pauseId = rest.pending[0]?.pauseId as string;
      expect(first[2]?.data).toMatchObject({ tool: "confirm-tool", pauseId });

      const answered = await post(a.url, `/pauses/${pauseId}/answer`, { decision: { approved: true } });
      expect(answered.status).toBe(200);
      expect(answered.contentType).toContain("text/event-stream");
      const after = eventsOf(answered.text);
      expect(after.map((e) => e.type)).toEqual([
        "execution.resumed",
        "pause.answered",
        "tool.started",
        "tool.returned",
        "model.turn",
        "execution.finished",
      ]);
      expect(after[1]?.data).toMatchObject({ outcome: "approved", pauseId });
      expect(after.at(-1)?.data.output).toMatchObject({
        status: "completed",
        threadId: "order:o9",
        pending: [],
      });

      // The pause no longer waits: the same request is answered as JSON, already_resolved.
      const again = await post(a.url, `/pauses/${pauseId}/answer`, { decision: { approved: true } });
      expect(again.contentType).toContain("application/json");
      expect(JSON.parse(again.text)).toMatchObject({ outcome: "already_resolved" });
    });

    test("a start refused before it ran is a problem document with its status, not a stream", async () => {
      const refused = await post(a.url, "/starts/desk-workflow-start", { input: { text: "" } });
      expect(refused.status).toBe(400);
      expect(refused.contentType).toContain("application/problem+json");
      expect(JSON.parse(refused.text)).toMatchObject({ code: "dto.invalid" });
    });

    test("a run that fails ends its stream with execution.failed and the problem the JSON route would answer", async () => {
      const failed = await post(a.url, "/starts/desk-workflow-start", { input: { text: "fail now" } });
      expect(failed.status).toBe(200);
      const events = eventsOf(failed.text);
      expect(events.map((e) => e.type)).toEqual(["execution.started", "execution.failed"]);
      expect(events[1]?.data.problem).toMatchObject({ status: 500, code: "agent.failed" });
      expect(events[1]?.data).not.toHaveProperty("error");
    });
  });
}
