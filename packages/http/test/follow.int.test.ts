import { appInternals } from "@agboss/core/internal";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { call, type Instance, openTestStore, STORE_KINDS, startInstance, type TestStore } from "./harness.js";

// GET /executions/{executionId}/events and GET /threads/{threadId}/events: an execution another request
// (here: another instance on the same store) runs, followed as server-sent events.

const DANA = "acme:owner:dana";

type SentEvent = { type: string; data: Record<string, unknown> };

/** The server-sent events of a text: each `event:` with its parsed `data:`. */
function eventsOf(text: string): SentEvent[] {
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

/** Opens a follow and reads it as it comes: `until(type)` waits for an event, `rest()` reads to the end. */
async function follow(base: string, path: string, as = DANA) {
  const controller = new AbortController();
  const res = await fetch(`${base}${path}`, {
    headers: { authorization: `Bearer ${as}`, accept: "text/event-stream" },
    signal: controller.signal,
  });
  const reader = res.body?.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let done = false;
  const readMore = async () => {
    const next = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
    if (next.done) done = true;
    else text += decoder.decode(next.value, { stream: true });
  };
  return {
    status: res.status,
    contentType: res.headers.get("content-type") ?? "",
    events: () => eventsOf(text.slice(0, text.lastIndexOf("\n\n") + 2)),
    async until(type: string) {
      while (!done && !eventsOf(text).some((e) => e.type === type)) await readMore();
    },
    async rest() {
      while (!done) await readMore();
      return eventsOf(text);
    },
    stop: () => controller.abort(),
  };
}

for (const kind of STORE_KINDS) {
  describe(`following an execution on ${kind}`, () => {
    let store: TestStore;
    let a: Instance;
    let b: Instance;
    beforeAll(async () => {
      store = await openTestStore(kind);
      a = await startInstance(store);
      b = await startInstance(store, { followPollIntervalMs: 50 });
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await store?.dispose();
    });

    test("another instance streams the thread whose pass this one runs: the pause asked, its answer and the end, each once", async () => {
      const started = await call(a.url, "/starts/desk-workflow-start", {
        as: DANA,
        body: { input: { text: "confirm f1 500" }, threadId: "order:f1" },
      });
      expect(started.status).toBe(202);
      const pauseId = (started.body.pending as { pauseId: string }[])[0]?.pauseId as string;

      const followed = await follow(b.url, "/threads/order:f1/events");
      expect(followed.status).toBe(200);
      expect(followed.contentType).toContain("text/event-stream");
      await followed.until("execution.paused");
      const answered = await call(a.url, `/pauses/${pauseId}/answer`, {
        as: DANA,
        body: { decision: { approved: true } },
      });
      expect(answered.status).toBe(200);
      const events = await followed.rest();

      expect(events.map((e) => e.type)).toEqual([
        "pause.asked",
        "execution.paused",
        "pause.answered",
        "execution.finished",
      ]);
      expect(events[0]?.data).toMatchObject({ pauseId, tool: "confirm-tool", threadId: "order:f1" });
      expect(events[1]?.data.output).toMatchObject({ status: "paused", pending: [{ pauseId }] });
      expect(events[2]?.data).toMatchObject({ pauseId, outcome: "approved" });
      expect(events[3]?.data.output).toMatchObject({
        status: "completed",
        threadId: "order:f1",
        executionId: started.body.executionId,
        pending: [],
      });
    });

    test("a cancel on another instance ends the follow with the pause withdrawn and the cancellation's problem", async () => {
      const started = await call(a.url, "/starts/desk-workflow-start", {
        as: DANA,
        body: { input: { text: "confirm f2 500" }, threadId: "order:f2" },
      });
      const followed = await follow(b.url, `/executions/${started.body.executionId as string}/events`);
      await followed.until("execution.paused");
      expect((await call(a.url, "/threads/order:f2/cancel", { as: DANA, method: "POST" })).status).toBe(200);
      const events = await followed.rest();
      expect(events.map((e) => e.type)).toEqual([
        "pause.asked",
        "execution.paused",
        "pause.withdrawn",
        "execution.failed",
      ]);
      expect(events[3]?.data.problem).toMatchObject({ status: 409, code: "execution.cancelled" });
      expect(events[3]?.data).not.toHaveProperty("error");
    });

    test("a client that goes away stops following: the serving instance no longer listens for the tree, and the run goes on", async () => {
      const started = await call(a.url, "/starts/desk-workflow-start", {
        as: DANA,
        body: { input: { text: "confirm f4 500" }, threadId: "order:f4" },
      });
      const executionId = started.body.executionId as string;
      const followers = appInternals(b.app).followers;
      const followed = await follow(b.url, "/threads/order:f4/events");
      await followed.until("execution.paused");
      expect(followers?.watching("acme", executionId)).toBe(true);
      followed.stop();
      for (let turn = 0; turn < 100 && followers?.watching("acme", executionId); turn += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(followers?.watching("acme", executionId)).toBe(false);
      const pauseId = (started.body.pending as { pauseId: string }[])[0]?.pauseId as string;
      const answered = await call(a.url, `/pauses/${pauseId}/answer`, {
        as: DANA,
        body: { decision: { approved: true } },
      });
      expect((answered.body.execution as { status: string }).status).toBe("completed");
    });

    test("an execution that ended gives its end alone; another owner's or tenant's thread is 404, no caller 401", async () => {
      const started = await call(a.url, "/starts/desk-workflow-start", {
        as: DANA,
        body: { input: { text: "confirm f3 500" }, threadId: "order:f3" },
      });
      await call(a.url, "/threads/order:f3/cancel", { as: DANA, method: "POST" });
      const ended = await follow(b.url, `/executions/${started.body.executionId as string}/events`);
      expect((await ended.rest()).map((e) => e.type)).toEqual(["execution.failed"]);

      const other = await call(b.url, "/threads/order:f3/events", { as: "acme:owner:erin" });
      expect(other.status).toBe(404);
      expect(other.body).toMatchObject({ code: "thread.unknown" });
      const tenant = await call(b.url, `/executions/${started.body.executionId as string}/events`, {
        as: "globex:owner:dana",
      });
      expect(tenant.status).toBe(404);
      expect(tenant.body).toMatchObject({ code: "execution.unknown" });
      expect((await call(b.url, "/threads/order:f3/events")).status).toBe(401);
      expect((await call(b.url, "/threads/order:f3/events", { method: "POST", as: DANA })).status).toBe(405);
    });
  });
}
