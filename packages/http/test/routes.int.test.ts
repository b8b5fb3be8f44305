import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { undocumented } from "./contract.js";
import { Ledger, Outbox } from "./fixtures/desk.js";
import {
  call,
  type Instance,
  openTestStore,
  STORE_KINDS,
  seen,
  startInstance,
  type TestStore,
} from "./harness.js";

const DANA = "acme:owner:dana";
const MANAGER = "acme:reviewer:manager-17";

describe.each(STORE_KINDS)("the routes over a loopback server, two instances on one %s store", (kind) => {
  let store: TestStore;
  let a: Instance;
  let b: Instance;
  beforeAll(async () => {
    store = await openTestStore(kind);
    a = await startInstance(store);
    b = await startInstance(store);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await store?.dispose();
  });

  /** The pause id the channel of `instance` was given last: only a channel sees it. */
  const lastPosted = (instance: Instance) => instance.app.get(Outbox).posted.at(-1)?.pauseId ?? "";

  test("a start that ends answers 200 with the output", async () => {
    const res = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "hello" } },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.body).toMatchObject({ status: "completed", output: { text: "answered: hello" }, pending: [] });
  });

  test("a refund pauses (202, no Channel pause id), is answered on the other instance, and a retry is already_resolved", async () => {
    const started = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "refund o1 2500" }, threadId: "order:o1" },
    });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: "paused", threadId: "order:o1" });
    const pending = started.body.pending as Record<string, unknown>[];
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({
      answeredBy: "channel",
      kind: "approval",
      channel: "refund-approval-channel",
    });
    expect(pending[0]).not.toHaveProperty("pauseId");
    expect(JSON.stringify(started.body)).not.toContain(lastPosted(a));
    const pauseId = lastPosted(a);

    const vague = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: MANAGER,
      body: { reply: "hmm, maybe" },
    });
    expect(vague.status).toBe(422);
    expect(vague.headers.get("content-type")).toBe("application/problem+json");
    expect(vague.body).toMatchObject({
      status: 422,
      code: "pause.uninterpretable-reply",
      reason: '"hmm, maybe" is neither "approve" nor "reject: <why>".',
    });
    const inbox = await call(b.url, "/pauses?threadId=order:o1", { as: DANA });
    expect((inbox.body.pauses as unknown[]).length).toBe(1);

    const wrongKind = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: DANA,
      body: { reply: "approve" },
    });
    expect(wrongKind.status).toBe(403);
    expect(wrongKind.body.code).toBe("pause.wrong-answerer");

    const answered = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: MANAGER,
      body: { reply: "approve" },
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({
      outcome: "answered",
      pauseId,
      execution: {
        status: "completed",
        threadId: "order:o1",
        output: { text: expect.stringContaining("refunded 2500") },
      },
    });
    expect(b.app.get(Ledger).refunds).toEqual(["o1"]);
    expect(a.app.get(Ledger).refunds).toEqual([]);

    const again = await call(a.url, `/pauses/${pauseId}/answer`, { as: MANAGER, body: { reply: "approve" } });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      outcome: "already_resolved",
      pauseId,
      resolution: "replied",
      by: "manager-17",
    });
    expect(Date.parse(String(again.body.at))).not.toBeNaN();
    expect(a.app.get(Ledger).refunds).toEqual([]);

    const record = await call(a.url, `/executions/${String(started.body.executionId)}`, { as: DANA });
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ status: "completed", threadId: "order:o1", ownerId: "dana" });
    expect(record.body.pauses).toMatchObject([
      { responder: "manager-17", resolution: "replied", decision: { approved: true } },
    ]);
  });

  test("an unknown pause and another tenant's pause get the same 404", async () => {
    await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "refund o9 100" } },
    });
    const real = lastPosted(a);
    const fake = "00000000-0000-4000-8000-000000000000";
    const unknown = await call(b.url, `/pauses/${fake}/answer`, { as: MANAGER, body: { reply: "approve" } });
    const foreign = await call(b.url, `/pauses/${real}/answer`, {
      as: "globex:reviewer:manager-17",
      body: { reply: "approve" },
    });
    expect(unknown.status).toBe(404);
    expect(foreign.status).toBe(404);
    expect(unknown.body.code).toBe("pause.unknown");
    expect(JSON.stringify(foreign.body).replaceAll(real, fake)).toBe(JSON.stringify(unknown.body));
    expect(foreign.headers.get("content-type")).toBe(unknown.headers.get("content-type"));
  });

  test("a start on a busy thread is 409 on either instance; the owner cancels it and a late answer is already_resolved", async () => {
    const first = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "refund o2 700" }, threadId: "order:o2" },
    });
    expect(first.status).toBe(202);
    const pauseId = lastPosted(a);
    const busy = await call(b.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "refund o2 700" }, threadId: "order:o2" },
    });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({
      code: "thread.busy",
      status: 409,
      type: expect.stringContaining("thread.busy"),
    });

    const stranger = await call(b.url, "/threads/order:o2/cancel", { as: "acme:owner:eve", method: "POST" });
    expect(stranger.status).toBe(404);
    expect(stranger.body.code).toBe("thread.unknown");
    const cancelled = await call(b.url, "/threads/order:o2/cancel", { as: DANA, method: "POST" });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ threadId: "order:o2", status: "cancelled" });
    expect(b.app.get(Outbox).withdrawn).toContain(pauseId);

    const late = await call(a.url, `/pauses/${pauseId}/answer`, {
      as: MANAGER,
      body: { decision: { approved: true } },
    });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ outcome: "already_resolved", resolution: "cancelled" });
  });

  test("a pause the thread's owner answers lists its id, and only that owner answers it", async () => {
    const started = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "confirm o3 900" } },
    });
    expect(started.status).toBe(202);
    const [pending] = started.body.pending as { pauseId?: string; answeredBy: string }[];
    expect(pending?.answeredBy).toBe("thread-owner");
    const pauseId = pending?.pauseId ?? "";
    expect(pauseId).not.toBe("");

    const inbox = await call(b.url, "/pauses", { as: DANA });
    expect(inbox.body.pauses).toEqual(
      expect.arrayContaining([expect.objectContaining({ pauseId, status: "pending" })]),
    );
    const eve = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: "acme:owner:eve",
      body: { decision: { approved: true } },
    });
    expect(eve.status).toBe(403);
    expect(eve.body.code).toBe("thread.owner");
    // A caller with both identities is answered with the one the pause asks for.
    const done = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: "acme:both:dana",
      body: { decision: { approved: true } },
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ outcome: "answered", execution: { status: "completed" } });
  });

  test("a question takes an answer of its DTO; a decision or an invalid answer is 400 with every field", async () => {
    const started = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "assess o4 3000" } },
    });
    expect(started.status).toBe(202);
    expect((started.body.pending as { kind: string }[])[0]?.kind).toBe("question");
    const pauseId = lastPosted(a);

    const decision = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: MANAGER,
      body: { decision: { approved: true } },
    });
    expect(decision.status).toBe(400);
    expect(decision.body).toMatchObject({ code: "dto.invalid", issues: [{ path: "decision" }] });
    const invalid = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: MANAGER,
      body: { answer: { refundCents: -1, note: 5 } },
    });
    expect(invalid.status).toBe(400);
    expect((invalid.body.issues as { path: string }[]).map((i) => i.path).sort()).toEqual([
      "note",
      "refundCents",
    ]);
    const shapeless = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: MANAGER,
      body: { approved: true, text: "x" },
    });
    expect(shapeless.status).toBe(400);
    expect((shapeless.body.issues as { path: string }[]).map((i) => i.path).sort()).toEqual([
      "approved",
      "text",
    ]);

    const answered = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: MANAGER,
      body: { answer: { refundCents: 1200, note: "dented" } },
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({
      execution: { status: "completed", output: { text: expect.stringContaining("refunded 1200") } },
    });
  });

  test("Prefer: respond-async answers 202 once the answer is recorded; the execution moves on", async () => {
    const started = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "refund o5 100" } },
    });
    const pauseId = lastPosted(a);
    const recorded = await call(b.url, `/pauses/${pauseId}/answer`, {
      as: MANAGER,
      body: { decision: { approved: false, reason: "duplicate" } },
      headers: { prefer: "respond-async" },
    });
    expect(recorded.status).toBe(202);
    expect(recorded.headers.get("preference-applied")).toBe("respond-async");
    expect(recorded.body).toMatchObject({ outcome: "recorded", pauseId, threadId: started.body.threadId });
    await b.app.idle();
    const record = await call(a.url, `/executions/${String(started.body.executionId)}`, { as: DANA });
    expect(record.body).toMatchObject({
      status: "completed",
      pauses: [{ decision: { approved: false, reason: "duplicate" } }],
    });
  });

  test("records and inboxes are the owner's: another owner gets 404, a reviewer 403", async () => {
    const started = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "hi" } },
    });
    const path = `/executions/${String(started.body.executionId)}`;
    expect((await call(b.url, path, { as: "acme:owner:eve" })).body.code).toBe("execution.unknown");
    expect((await call(b.url, path, { as: "globex:owner:dana" })).status).toBe(404);
    const reviewer = await call(b.url, path, { as: MANAGER });
    expect(reviewer.status).toBe(403);
    expect(reviewer.body.code).toBe("http.forbidden");
    expect((await call(b.url, "/pauses", { as: MANAGER })).status).toBe(403);
    expect(
      (await call(b.url, "/starts/desk-workflow-start", { as: MANAGER, body: { input: { text: "x" } } }))
        .status,
    ).toBe(403);
    const bad = await call(b.url, "/pauses?status=waiting&limit=0&color=red", { as: DANA });
    expect(bad.status).toBe(400);
    expect((bad.body.issues as { path: string }[]).map((i) => i.path).sort()).toEqual([
      "color",
      "limit",
      "status",
    ]);
  });

  test("who is calling comes from authenticate: none is 401, a refusal 403, a body cannot claim it", async () => {
    const none = await call(a.url, "/starts/desk-workflow-start", {
      body: { input: { text: "x" }, ownerId: "dana" },
    });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect(none.body.code).toBe("http.unauthenticated");
    const suspended = await call(a.url, "/pauses", { as: "acme:suspended:mallory" });
    expect(suspended.status).toBe(403);
    expect(suspended.body).toMatchObject({ code: "http.forbidden", detail: "mallory is suspended." });
    const claim = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "x" }, ownerId: "eve" },
    });
    expect(claim.status).toBe(400);
    expect(claim.body.issues).toEqual([
      { path: "ownerId", message: expect.stringContaining("unknown field") },
    ]);
  });

  test("invalid starts list every field; a failed execution is a 500 problem with its code", async () => {
    const invalid = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: 5 }, threadId: "" },
    });
    expect(invalid.status).toBe(400);
    expect((invalid.body.issues as { path: string }[]).map((i) => i.path).sort()).toEqual([
      "input.text",
      "threadId",
    ]);
    const failed = await call(a.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "fail now" } },
    });
    expect(failed.status).toBe(500);
    expect(failed.headers.get("content-type")).toBe("application/problem+json");
    expect(failed.body).toMatchObject({ status: 500, code: "agent.failed" });
    const unknownStart = await call(a.url, "/starts/nope", { as: DANA, body: { input: {} } });
    expect(unknownStart.status).toBe(404);
    expect(unknownStart.body.code).toBe("workflow.unknown");
  });

  test("unknown routes are 404 and wrong methods 405, as problems", async () => {
    const missing = await call(a.url, "/nowhere", { as: DANA });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("http.route-unknown");
    const method = await call(a.url, "/starts/desk-workflow-start", { as: DANA });
    expect(method.status).toBe(405);
    expect(method.headers.get("allow")).toBe("POST");
  });

  test("every response above is documented in the OpenAPI document, with a body that fits its schema", async () => {
    const document = (await call(a.url, "/openapi.json")).body as Parameters<typeof undocumented>[0];
    // Left out: the document itself, and requests to paths or methods it does not describe.
    const outside = new Set(["http.route-unknown", "http.method-not-allowed", "workflow.unknown"]);
    const responses = seen.filter(
      (r) =>
        (r.base === a.url || r.base === b.url) &&
        r.path !== "/openapi.json" &&
        !outside.has(String((r.body as { code?: unknown }).code)),
    );
    expect(responses.length).toBeGreaterThanOrEqual(30);
    expect(undocumented(document, responses)).toEqual([]);
  });
});
