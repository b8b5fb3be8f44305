import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PauseKind, PauseResolution, PauseStatus } from "@agboss/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { modelProvidersFor } from "../src/models.js";
import { type RefundServer, startRefundServer } from "../src/server.js";
import {
  answerPause,
  cancelOrder,
  get,
  outbox,
  post,
  refunds,
  reportDamage,
  requestRefund,
  START,
  startChild,
  TOKENS,
} from "./http.js";
import { openTestStore, STORE_KINDS, type TestStore } from "./stores.js";

const scriptedEnv = {}; // no key: scripted models, no network
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "agboss-refund-webhooks-"));
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

async function questionFor(url: string, threadId: string) {
  const message = (await outbox(url)).find((m) => m.threadId === threadId);
  expect(message, `no question for ${threadId} in the outbox`).toBeDefined();
  return message as NonNullable<typeof message>;
}

// The same desk, the same requests and answers, on either store: only the store choice differs.
describe.each(STORE_KINDS)("on the %s store", (kind) => {
  let store: TestStore;
  let server: RefundServer;
  let base: string;

  beforeAll(async () => {
    store = await openTestStore(kind);
    server = await startRefundServer({ store: store.choice, port: 0, env: scriptedEnv });
    base = server.url;
  });

  afterAll(async () => {
    await server?.close();
    await store?.dispose();
  });

  describe("the refund desk over HTTP", () => {
    test("a refund request pauses, is posted to the outbox, and is answered in words", async () => {
      const started = await requestRefund(base, "ord_1042");
      expect(started.status).toBe(202);
      expect(started.body).toMatchObject({
        status: "paused",
        threadId: "order:ord_1042",
        pending: [{ kind: "approval", answeredBy: "channel", channel: "refund-approval-channel" }],
      });
      // A channel's pause: its id is the right to answer, so only the channel (the outbox) has it.
      expect((started.body.pending as object[])[0]).not.toHaveProperty("pauseId");

      const question = await questionFor(base, "order:ord_1042");
      expect(question).toMatchObject({
        channel: "refund-approval-channel",
        question: "Refund 25.00 to the card of order ord_1042 (asked by dana)?",
        arguments: { orderId: "ord_1042", amountCents: 2500 },
        state: "open",
      });
      expect(question.pauseId).toMatch(/^[A-Za-z0-9_-]{22}$/);

      const unknown = await answerPause(base, "no-such-pause", { reply: "lgtm" }, TOKENS.manager);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ status: 404, code: "pause.unknown" });

      const vague = await answerPause(base, question.pauseId, { reply: "hmm, maybe" }, TOKENS.manager);
      expect(vague.status).toBe(422);
      expect(vague.body.code).toBe("pause.uninterpretable-reply");
      expect(vague.body.reason).toContain('I could not read "hmm, maybe" as a decision');
      expect((await questionFor(base, "order:ord_1042")).state).toBe("open");
      const inbox = await get<{ pauses: { status: string }[] }>(
        base,
        "/pauses?threadId=order:ord_1042",
        TOKENS.dana,
      );
      expect(inbox.body.pauses.map((p) => p.status)).toEqual(["pending"]);

      const approved = await answerPause(base, question.pauseId, { reply: "  LGTM " }, TOKENS.manager);
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({
        outcome: "answered",
        pauseId: question.pauseId,
        execution: {
          status: "completed",
          threadId: "order:ord_1042",
          output: { text: "Done: refunded 25.00 (rf_acme_ord_1042)." },
        },
      });
      expect(await questionFor(base, "order:ord_1042")).toMatchObject({
        state: "answered",
        note: "answered by manager-17",
      });
      const refunded = { refundId: "rf_acme_ord_1042", orderId: "ord_1042", amountCents: 2500 };
      expect(await refunds(base)).toMatchObject([refunded]);

      const again = await answerPause(base, question.pauseId, { reply: "lgtm" }, TOKENS.otherManager);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({
        outcome: "already_resolved",
        resolution: "replied",
        by: "manager-17",
      });
      expect(typeof again.body.at).toBe("string");
      expect(await refunds(base)).toMatchObject([refunded]); // the repeated answer refunded nothing
    });

    test('"reject: <why>" refuses the refund, and the agent tells the customer why', async () => {
      await requestRefund(base, "ord_2001");
      const { pauseId } = await questionFor(base, "order:ord_2001");
      const rejected = await answerPause(
        base,
        pauseId,
        { reply: "reject: refunded by hand yesterday" },
        TOKENS.manager,
      );
      expect(rejected.status).toBe(200);
      expect(rejected.body).toMatchObject({
        execution: {
          output: {
            text: "I could not do it: the call was rejected by manager-17: refunded by hand yesterday.",
          },
        },
      });
    });

    test("a button answers with a decision instead of words", async () => {
      await requestRefund(base, "ord_2002", "Broken on arrival.", 990);
      const { pauseId } = await questionFor(base, "order:ord_2002");
      const clicked = await answerPause(base, pauseId, { decision: { approved: true } }, TOKENS.manager);
      expect(clicked.body).toMatchObject({
        execution: { status: "completed", output: { text: "Done: refunded 9.90 (rf_acme_ord_2002)." } },
      });
    });

    test("a goodwill credit is read by the model interpreter", async () => {
      const started = await requestRefund(base, "ord_3001", "A store credit would be fine.", 1500);
      expect(started.status).toBe(202);
      const question = await questionFor(base, "order:ord_3001");
      expect(question).toMatchObject({
        channel: "goodwill-approval-channel",
        arguments: { orderId: "ord_3001", amountCents: 1500 },
      });

      const unclear = await answerPause(base, question.pauseId, { reply: "let me think" }, TOKENS.manager);
      expect(unclear.status).toBe(422);
      expect(unclear.body.reason).toEqual(expect.any(String));

      const agreed = await answerPause(
        base,
        question.pauseId,
        { reply: "Sure, give them the credit." },
        TOKENS.manager,
      );
      expect(agreed.status).toBe(200);
      expect(agreed.body).toMatchObject({
        execution: {
          status: "completed",
          threadId: "order:ord_3001",
          output: { text: "Done: credited 15.00 (gc_acme_ord_3001)." },
        },
      });
    });

    test("a second request for a waiting order is refused, and cancelling withdraws the question", async () => {
      await requestRefund(base, "ord_4001");
      const busy = await requestRefund(base, "ord_4001");
      expect(busy.status).toBe(409);
      expect(busy.body.code).toBe("thread.busy");
      const cancelled = await cancelOrder(base, "ord_4001");
      expect(cancelled).toMatchObject({
        status: 200,
        body: { status: "cancelled", threadId: "order:ord_4001" },
      });
      const question = await questionFor(base, "order:ord_4001");
      expect(question).toMatchObject({
        state: "withdrawn",
        note: "The request was cancelled; no answer needed.",
      });
      const late = await answerPause(base, question.pauseId, { reply: "lgtm" }, TOKENS.manager);
      expect(late.body).toMatchObject({ outcome: "already_resolved", resolution: "cancelled" });
    });

    test("a request retried with its Idempotency-Key gets the first one's execution; the manager is asked once", async () => {
      const send = () =>
        fetch(`${base}${START}`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${TOKENS.dana}`,
            "content-type": "application/json",
            "idempotency-key": "shop-delivery-8812",
          },
          body: JSON.stringify({ input: { orderId: "ord_4101", amountCents: 1200, text: "Never arrived." } }),
        });
      const first = await send();
      expect(first.status).toBe(202);
      const firstBody = (await first.json()) as { executionId: string; threadId: string };
      expect(firstBody.threadId).toBe("order:ord_4101");
      const retry = await send();
      expect(retry.status).toBe(202);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(((await retry.json()) as { executionId: string }).executionId).toBe(firstBody.executionId);
      expect((await outbox(base)).filter((m) => m.threadId === "order:ord_4101")).toHaveLength(1);
    });

    test("who answers comes from the credential: none is 401, the wrong kind 403, another shop's 404", async () => {
      await requestRefund(base, "ord_5003");
      const { pauseId } = await questionFor(base, "order:ord_5003");
      const anonymous = await answerPause(base, pauseId, { reply: "lgtm" }, "no-such-token");
      expect(anonymous.status).toBe(401);
      // A pause answered through its channel is not the thread owner's to answer.
      const owner = await answerPause(base, pauseId, { decision: { approved: true } }, TOKENS.dana);
      expect(owner.status).toBe(403);
      expect(owner.body.code).toBe("pause.wrong-answerer");
      const foreign = await answerPause(base, pauseId, { reply: "lgtm" }, TOKENS.globexManager);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe("pause.unknown");
      expect((await questionFor(base, "order:ord_5003")).state).toBe("open");
    });

    test("invalid bodies are 400 with every issue", async () => {
      const bad = await post(
        base,
        START,
        { input: { orderId: "ord_5001", amountCents: -5 }, tenantId: "acme" },
        TOKENS.dana,
      );
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe("dto.invalid");
      expect((bad.body.issues as { path: string }[]).map((i) => i.path).sort()).toEqual([
        "input.amountCents",
        "input.text",
        "tenantId",
      ]);

      await requestRefund(base, "ord_5002");
      const { pauseId } = await questionFor(base, "order:ord_5002");
      const both = await answerPause(
        base,
        pauseId,
        { decision: { approved: true }, reply: "lgtm" },
        TOKENS.manager,
      );
      expect(both.status).toBe(400);
      const notJson = await fetch(`${base}/pauses/${pauseId}/answer`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKENS.manager}`, "content-type": "application/json" },
        body: "{nope",
      });
      expect(notJson.status).toBe(400);
      expect(notJson.headers.get("content-type")).toBe("application/problem+json");
    });
  });

  describe("a damaged item: a question a warehouse lead answers with an amount", () => {
    test("the claim pauses as a question, is posted to the outbox, and a structured answer settles it", async () => {
      const started = await reportDamage(base, "ord_6001");
      expect(started.status).toBe(202);
      expect(started.body).toMatchObject({
        status: "paused",
        threadId: "order:ord_6001",
        pending: [{ kind: "question", channel: "damage-assessment-channel" }],
      });

      const question = await questionFor(base, "order:ord_6001");
      expect(question).toMatchObject({
        channel: "damage-assessment-channel",
        kind: "question",
        question:
          "Order ord_6001 arrived damaged (paid 25.00, reported by dana). How much goes back to the card?",
        arguments: { orderId: "ord_6001", amountCents: 2500 },
        state: "open",
      });
      expect(question.howToAnswer).toContain('"full", "half", "none"');
      const inbox = await get<{ pauses: Record<string, unknown>[] }>(
        base,
        "/pauses?threadId=order:ord_6001",
        TOKENS.dana,
      );
      expect(inbox.body.pauses).toHaveLength(1);
      expect(inbox.body.pauses[0]).toMatchObject({
        kind: PauseKind.Question,
        status: PauseStatus.Pending,
        channel: "damage-assessment-channel",
      });
      expect(inbox.body.pauses[0]).not.toHaveProperty("pauseId"); // only the outbox message carries it

      const answered = await answerPause(
        base,
        question.pauseId,
        { answer: { refundCents: 1800, restock: true, note: "only the lid is chipped" } },
        TOKENS.lead,
      );
      expect(answered.status).toBe(200);
      expect(answered.body).toMatchObject({
        execution: {
          status: "completed",
          threadId: "order:ord_6001",
          output: {
            text: "Done: refunded 18.00 of 25.00 (rf_acme_ord_6001); item back in stock; only the lid is chipped.",
          },
        },
      });
      expect(await questionFor(base, "order:ord_6001")).toMatchObject({
        state: "answered",
        note: "answered by lead-4",
      });

      // The audit trail holds the answer, and no decision.
      const record = await get<{ pauses: Record<string, unknown>[] }>(
        base,
        `/executions/${String(started.body.executionId)}`,
        TOKENS.dana,
      );
      expect(record.status).toBe(200);
      expect(record.body.pauses).toHaveLength(1);
      expect(record.body.pauses[0]).toMatchObject({
        role: "damage-assessment-channel",
        kind: PauseKind.Question,
        responder: "lead-4",
        resolution: PauseResolution.Replied,
        answer: { refundCents: 1800, restock: true, note: "only the lid is chipped" },
      });
      expect(record.body.pauses[0]?.decision).toBeUndefined();

      const again = await answerPause(base, question.pauseId, { answer: { refundCents: 0 } }, TOKENS.lead);
      expect(again.body).toMatchObject({ outcome: "already_resolved", resolution: "replied", by: "lead-4" });
    });

    test("a reply in words is read by the code interpreter; one it cannot read is 422 and the question stays open", async () => {
      await reportDamage(base, "ord_6002");
      const { pauseId } = await questionFor(base, "order:ord_6002");

      const vague = await answerPause(base, pauseId, { reply: "looks bad" }, TOKENS.lead);
      expect(vague.status).toBe(422);
      expect(vague.body.code).toBe("pause.uninterpretable-reply");
      expect(vague.body.reason).toContain('I could not read "looks bad" as an amount.');
      const tooMuch = await answerPause(base, pauseId, { reply: "40.00" }, TOKENS.lead);
      expect(tooMuch.status).toBe(422);
      expect(tooMuch.body.reason).toContain("40.00 is more than the 25.00 paid for order ord_6002.");
      expect((await questionFor(base, "order:ord_6002")).state).toBe("open");
      const waiting = await server.app.pauses.list({ tenantId: "acme", threadId: "order:ord_6002" });
      expect(waiting.map((p) => p.status)).toEqual([PauseStatus.Pending]);

      const half = await answerPause(
        base,
        pauseId,
        { reply: "Half, restock: box dented, vase fine" },
        TOKENS.lead,
      );
      expect(half.body).toMatchObject({
        execution: {
          status: "completed",
          threadId: "order:ord_6002",
          output: {
            text: "Done: refunded 12.50 of 25.00 (rf_acme_ord_6002); item back in stock; box dented, vase fine.",
          },
        },
      });

      await reportDamage(base, "ord_6003");
      const amount = await answerPause(
        base,
        (await questionFor(base, "order:ord_6003")).pauseId,
        { reply: "7.5" },
        TOKENS.lead,
      );
      expect(amount.body).toMatchObject({
        execution: { output: { text: "Done: refunded 7.50 of 25.00 (rf_acme_ord_6003)." } },
      });

      await reportDamage(base, "ord_6004");
      const none = await answerPause(
        base,
        (await questionFor(base, "order:ord_6004")).pauseId,
        { reply: "none: only the outer box is scuffed" },
        TOKENS.lead,
      );
      expect(none.body).toMatchObject({
        execution: {
          output: { text: "Done: no refund for ord_6004 after inspection; only the outer box is scuffed." },
        },
      });
    });

    test("the wrong kind of payload is 400 saying what to send instead; both questions keep waiting", async () => {
      await reportDamage(base, "ord_6005");
      const damage = await questionFor(base, "order:ord_6005");
      await requestRefund(base, "ord_6006");
      const refund = await questionFor(base, "order:ord_6006");
      expect(refund.kind).toBe("approval");

      // A button (a decision) for a question.
      const button = await answerPause(
        base,
        damage.pauseId,
        { decision: { approved: true } },
        TOKENS.manager,
      );
      expect(button.status).toBe(400);
      expect(button.body).toMatchObject({
        code: "dto.invalid",
        issues: [
          {
            path: "decision",
            message: expect.stringContaining(
              "answer it with { answer } (a DamageAssessmentDto), not a decision",
            ),
          },
        ],
      });
      // An answer for an approval.
      const form = await answerPause(base, refund.pauseId, { answer: { refundCents: 2500 } }, TOKENS.lead);
      expect(form.status).toBe(400);
      expect(form.body).toMatchObject({
        code: "dto.invalid",
        issues: [
          {
            path: "answer",
            message: expect.stringContaining(
              "answer it with { decision: { approved, reason?, overrideArguments? } }",
            ),
          },
        ],
      });
      // An answer the role's answer DTO refuses, and a body with both or neither.
      const invalid = await answerPause(
        base,
        damage.pauseId,
        { answer: { refundCents: -5, restock: "yes" } },
        TOKENS.lead,
      );
      expect(invalid.status).toBe(400);
      expect((invalid.body.issues as { path: string }[]).map((i) => i.path).sort()).toEqual([
        "refundCents",
        "restock",
      ]);
      const both = await answerPause(
        base,
        damage.pauseId,
        { answer: { refundCents: 100 }, reply: "full" },
        TOKENS.lead,
      );
      expect(both.status).toBe(400);
      const neither = await answerPause(base, damage.pauseId, {}, TOKENS.lead);
      expect(neither.status).toBe(400);

      const open = await server.app.pauses.list({ tenantId: "acme", status: PauseStatus.Pending });
      const kinds = Object.fromEntries(
        open.filter((p) => p.threadId.startsWith("order:ord_600")).map((p) => [p.threadId, p.kind]),
      );
      expect(kinds).toEqual({ "order:ord_6005": PauseKind.Question, "order:ord_6006": PauseKind.Approval });

      const full = await answerPause(base, damage.pauseId, { reply: "full" }, TOKENS.lead);
      expect(full.body).toMatchObject({
        execution: { output: { text: "Done: refunded 25.00 of 25.00 (rf_acme_ord_6005)." } },
      });
      const approved = await answerPause(
        base,
        refund.pauseId,
        { decision: { approved: true } },
        TOKENS.manager,
      );
      expect(approved.body).toMatchObject({
        execution: { output: { text: "Done: refunded 25.00 (rf_acme_ord_6006)." } },
      });
    });

    test("an answered amount above the price reaches the agent as a tool error; nothing is refunded", async () => {
      await reportDamage(base, "ord_6007");
      const { pauseId } = await questionFor(base, "order:ord_6007");
      const tooMuch = await answerPause(base, pauseId, { answer: { refundCents: 4000 } }, TOKENS.lead);
      expect(tooMuch.body).toMatchObject({
        execution: {
          status: "completed",
          output: {
            text: "I could not do it: the warehouse lead settled on 40.00, more than the 25.00 paid for ord_6007.",
          },
        },
      });
    });

    test("a small claim is answered at once by the channel: no question is posted and nothing waits", async () => {
      const done = await reportDamage(base, "ord_6008", 400);
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({
        status: "completed",
        threadId: "order:ord_6008",
        output: {
          text: "Done: refunded 4.00 of 4.00 (rf_acme_ord_6008); small claim (up to 5.00), refunded without inspection.",
        },
        pending: [],
      });
      expect((await outbox(base)).some((m) => m.threadId === "order:ord_6008")).toBe(false);
      const [closed] = await server.app.pauses.list({ tenantId: "acme", threadId: "order:ord_6008" });
      expect(closed).toMatchObject({
        kind: PauseKind.Question,
        status: PauseStatus.Taken,
        resolution: PauseResolution.Decided,
      });
    });
  });

  test("the OpenAPI document describes the start's input and the question's answer", async () => {
    const doc = await get<{
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    }>(base, "/openapi.json");
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toContain(START);
    expect(doc.body.components.schemas).toMatchObject({
      RefundDeskWorkflowStartInput: { required: ["orderId", "amountCents", "text"] },
      DamageAssessmentDto: { required: ["refundCents"] },
    });
  });
});

describe("choosing the models", () => {
  test("scripted without a key, the OpenAI-compatible provider with one", async () => {
    expect(modelProvidersFor({}).kind).toBe("scripted");
    expect(modelProvidersFor({ OPENAI_API_KEY: "sk-test" }).kind).toBe("openai-compatible");
    const real = await startRefundServer({
      store: { kind: "sqlite", path: join(dataDir, "openai.sqlite") },
      port: 0,
      env: { AGBOSS_OPENAI_API_KEY: "sk-test", AGBOSS_OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    try {
      expect(real.models).toBe("openai-compatible");
    } finally {
      await real.close();
    }
  });
});

describe("restarting the server between the request and the answer", () => {
  test("a fresh process over the same SQLite file answers the pause", async () => {
    const sqlitePath = join(dataDir, "restart.sqlite");
    const first = await startChild({ AGBOSS_SQLITE_PATH: sqlitePath });
    let pauseId: string;
    try {
      const started = await requestRefund(first.url, "ord_9001");
      expect(started.status).toBe(202);
      pauseId = (await questionFor(first.url, "order:ord_9001")).pauseId;
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(first.output()).toContain("SIGTERM: closing");

    const second = await startChild({ AGBOSS_SQLITE_PATH: sqlitePath });
    try {
      expect(await outbox(second.url)).toEqual([]); // the outbox was the old process's; the pause is in the file
      const approved = await answerPause(second.url, pauseId, { reply: "approve" }, TOKENS.manager);
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({
        execution: {
          status: "completed",
          threadId: "order:ord_9001",
          output: { text: "Done: refunded 25.00 (rf_acme_ord_9001)." },
        },
      });
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 90_000);
});
