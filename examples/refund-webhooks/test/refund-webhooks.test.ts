import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PauseKind, PauseResolution, PauseStatus } from "@agboss/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { modelProvidersFor } from "../src/models.js";
import { type RefundServer, startRefundServer } from "../src/server.js";
import { outbox, post, refunds, startChild } from "./http.js";
import { openTestStore, STORE_KINDS, type TestStore } from "./stores.js";

const scriptedEnv = {}; // no key: scripted models, no network
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "agboss-refund-webhooks-"));
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const manager = { tenantId: "acme", managerId: "manager-17" };

function refundRequest(orderId: string, text = "The parcel never arrived.", amountCents = 2500) {
  return { orderId, amountCents, tenantId: "acme", userId: "dana", text };
}

const lead = { tenantId: "acme", staffId: "lead-4" };

function damageClaim(orderId: string, amountCents = 2500) {
  return refundRequest(orderId, "The vase arrived damaged.", amountCents);
}

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
      const started = await post(base, "/webhooks/refund-request", refundRequest("ord_1042"));
      expect(started).toEqual({
        status: 202,
        body: { state: "awaiting_approval", threadId: "order:ord_1042" },
      });

      const question = await questionFor(base, "order:ord_1042");
      expect(question).toMatchObject({
        channel: "refund-approval-channel",
        question: "Refund 25.00 to the card of order ord_1042 (asked by dana)?",
        arguments: { orderId: "ord_1042", amountCents: 2500 },
        state: "open",
      });
      expect(question.pauseId).toMatch(/^[A-Za-z0-9_-]{22}$/);

      const unknown = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId: "no-such-pause",
        reply: "lgtm",
      });
      expect(unknown).toEqual({ status: 404, body: { error: "pause.unknown" } });

      const vague = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId: question.pauseId,
        reply: "hmm, maybe",
      });
      expect(vague.status).toBe(422);
      expect(vague.body.clarify).toContain('I could not read "hmm, maybe" as a decision');
      expect((await questionFor(base, "order:ord_1042")).state).toBe("open");
      const waiting = await server.app.pauses.list({ tenantId: "acme", threadId: "order:ord_1042" });
      expect(waiting.map((p) => p.status)).toEqual(["pending"]);

      const approved = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId: question.pauseId,
        reply: "  LGTM ",
      });
      expect(approved).toEqual({
        status: 200,
        body: {
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

      const again = await post(base, "/webhooks/approval", {
        ...manager,
        managerId: "manager-99",
        pauseId: question.pauseId,
        reply: "lgtm",
      });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({
        status: "already_resolved",
        resolution: "replied",
        by: "manager-17",
      });
      expect(typeof again.body.at).toBe("string");
      expect(await refunds(base)).toMatchObject([refunded]); // the repeated answer refunded nothing
    });

    test('"reject: <why>" refuses the refund, and the agent tells the customer why', async () => {
      await post(base, "/webhooks/refund-request", refundRequest("ord_2001"));
      const { pauseId } = await questionFor(base, "order:ord_2001");
      const rejected = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId,
        reply: "reject: refunded by hand yesterday",
      });
      expect(rejected.status).toBe(200);
      expect(rejected.body.output).toEqual({
        text: "I could not do it: the call was rejected by manager-17: refunded by hand yesterday.",
      });
    });

    test("a button (approved: true) answers with a decision instead of words", async () => {
      await post(base, "/webhooks/refund-request", refundRequest("ord_2002", "Broken on arrival.", 990));
      const { pauseId } = await questionFor(base, "order:ord_2002");
      const clicked = await post(base, "/webhooks/approval", { ...manager, pauseId, approved: true });
      expect(clicked.body).toMatchObject({
        status: "completed",
        output: { text: "Done: refunded 9.90 (rf_acme_ord_2002)." },
      });
    });

    test("a goodwill credit is read by the model interpreter", async () => {
      const started = await post(
        base,
        "/webhooks/refund-request",
        refundRequest("ord_3001", "A store credit would be fine.", 1500),
      );
      expect(started.status).toBe(202);
      const question = await questionFor(base, "order:ord_3001");
      expect(question).toMatchObject({
        channel: "goodwill-approval-channel",
        arguments: { orderId: "ord_3001", amountCents: 1500 },
      });

      const unclear = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId: question.pauseId,
        reply: "let me think",
      });
      expect(unclear.status).toBe(422);
      expect(unclear.body.clarify).toEqual(expect.any(String));

      const agreed = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId: question.pauseId,
        reply: "Sure, give them the credit.",
      });
      expect(agreed).toEqual({
        status: 200,
        body: {
          status: "completed",
          threadId: "order:ord_3001",
          output: { text: "Done: credited 15.00 (gc_acme_ord_3001)." },
        },
      });
    });

    test("a second request for a waiting order is refused, and cancelling withdraws the question", async () => {
      await post(base, "/webhooks/refund-request", refundRequest("ord_4001"));
      const busy = await post(base, "/webhooks/refund-request", refundRequest("ord_4001"));
      expect(busy.status).toBe(409);
      const cancelled = await post(base, "/webhooks/cancel", { orderId: "ord_4001", tenantId: "acme" });
      expect(cancelled).toEqual({ status: 200, body: { status: "cancelled", threadId: "order:ord_4001" } });
      const question = await questionFor(base, "order:ord_4001");
      expect(question).toMatchObject({
        state: "withdrawn",
        note: "The request was cancelled; no answer needed.",
      });
      const late = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId: question.pauseId,
        reply: "lgtm",
      });
      expect(late.body).toMatchObject({ status: "already_resolved", resolution: "cancelled" });
    });

    test("invalid bodies are 400 with every issue; the wrong credential is 403", async () => {
      const bad = await post(base, "/webhooks/refund-request", {
        orderId: "ord_5001",
        amountCents: -5,
        tenantId: "acme",
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe("dto.invalid");
      expect((bad.body.issues as { path: string }[]).map((i) => i.path).sort()).toEqual([
        "amountCents",
        "text",
        "userId",
      ]);

      await post(base, "/webhooks/refund-request", refundRequest("ord_5002"));
      const { pauseId } = await questionFor(base, "order:ord_5002");
      const both = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId,
        approved: true,
        reply: "lgtm",
      });
      expect(both.status).toBe(400);
      const notJson = await fetch(`${base}/webhooks/approval`, { method: "POST", body: "{nope" });
      expect(notJson.status).toBe(400);

      // a pause answered by the channel is not the thread owner's to answer
      const forbidden = await server.app
        .resume({ pauseId, decision: { approved: true } }, { tenantId: "acme", ownerId: "dana" })
        .catch((error: unknown) => error);
      expect(forbidden).toMatchObject({ code: "pause.wrong-answerer" });
    });
  });

  describe("a damaged item: a question a warehouse lead answers with an amount", () => {
    test("the claim pauses as a question, is posted to the outbox, and a structured answer settles it", async () => {
      const started = await post(base, "/webhooks/refund-request", damageClaim("ord_6001"));
      expect(started).toEqual({
        status: 202,
        body: { state: "awaiting_answer", threadId: "order:ord_6001" },
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
      const [pending] = await server.app.pauses.list({ tenantId: "acme", threadId: "order:ord_6001" });
      expect(pending).toMatchObject({
        pauseId: undefined, // a channel's pause: only the outbox message carries the id
        kind: PauseKind.Question,
        status: PauseStatus.Pending,
        channel: "damage-assessment-channel",
      });

      const answered = await post(base, "/webhooks/answer", {
        ...lead,
        pauseId: question.pauseId,
        answer: { refundCents: 1800, restock: true, note: "only the lid is chipped" },
      });
      expect(answered).toEqual({
        status: 200,
        body: {
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
      const record = await server.app.record(pending?.executionId as string, { tenantId: "acme" });
      expect(record?.pauses).toHaveLength(1);
      expect(record?.pauses[0]).toMatchObject({
        role: "damage-assessment-channel",
        kind: PauseKind.Question,
        responder: "lead-4",
        resolution: PauseResolution.Replied,
        answer: { refundCents: 1800, restock: true, note: "only the lid is chipped" },
      });
      expect(record?.pauses[0]?.decision).toBeUndefined();

      const again = await post(base, "/webhooks/answer", {
        ...lead,
        pauseId: question.pauseId,
        answer: { refundCents: 0 },
      });
      expect(again.body).toMatchObject({ status: "already_resolved", resolution: "replied", by: "lead-4" });
    });

    test("a reply in words is read by the code interpreter; one it cannot read is 422 and the question stays open", async () => {
      await post(base, "/webhooks/refund-request", damageClaim("ord_6002"));
      const { pauseId } = await questionFor(base, "order:ord_6002");

      const vague = await post(base, "/webhooks/answer", { ...lead, pauseId, reply: "looks bad" });
      expect(vague.status).toBe(422);
      expect(vague.body.error).toBe("pause.uninterpretable-reply");
      expect(vague.body.clarify).toContain('I could not read "looks bad" as an amount.');
      const tooMuch = await post(base, "/webhooks/answer", { ...lead, pauseId, reply: "40.00" });
      expect(tooMuch.status).toBe(422);
      expect(tooMuch.body.clarify).toContain("40.00 is more than the 25.00 paid for order ord_6002.");
      expect((await questionFor(base, "order:ord_6002")).state).toBe("open");
      const waiting = await server.app.pauses.list({ tenantId: "acme", threadId: "order:ord_6002" });
      expect(waiting.map((p) => p.status)).toEqual([PauseStatus.Pending]);

      const half = await post(base, "/webhooks/answer", {
        ...lead,
        pauseId,
        reply: "Half, restock: box dented, vase fine",
      });
      expect(half).toEqual({
        status: 200,
        body: {
          status: "completed",
          threadId: "order:ord_6002",
          output: {
            text: "Done: refunded 12.50 of 25.00 (rf_acme_ord_6002); item back in stock; box dented, vase fine.",
          },
        },
      });

      await post(base, "/webhooks/refund-request", damageClaim("ord_6003"));
      const amount = await post(base, "/webhooks/answer", {
        ...lead,
        pauseId: (await questionFor(base, "order:ord_6003")).pauseId,
        reply: "7.5",
      });
      expect(amount.body.output).toEqual({ text: "Done: refunded 7.50 of 25.00 (rf_acme_ord_6003)." });

      await post(base, "/webhooks/refund-request", damageClaim("ord_6004"));
      const none = await post(base, "/webhooks/answer", {
        ...lead,
        pauseId: (await questionFor(base, "order:ord_6004")).pauseId,
        reply: "none: only the outer box is scuffed",
      });
      expect(none.body.output).toEqual({
        text: "Done: no refund for ord_6004 after inspection; only the outer box is scuffed.",
      });
    });

    test("the wrong kind of payload is 400 saying what to send instead; both questions keep waiting", async () => {
      await post(base, "/webhooks/refund-request", damageClaim("ord_6005"));
      const damage = await questionFor(base, "order:ord_6005");
      await post(base, "/webhooks/refund-request", refundRequest("ord_6006"));
      const refund = await questionFor(base, "order:ord_6006");
      expect(refund.kind).toBe("approval");

      // A button (a decision) for a question.
      const button = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId: damage.pauseId,
        approved: true,
      });
      expect(button.status).toBe(400);
      expect(button.body).toMatchObject({
        error: "dto.invalid",
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
      const form = await post(base, "/webhooks/answer", {
        ...lead,
        pauseId: refund.pauseId,
        answer: { refundCents: 2500 },
      });
      expect(form.status).toBe(400);
      expect(form.body).toMatchObject({
        error: "dto.invalid",
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
      const invalid = await post(base, "/webhooks/answer", {
        ...lead,
        pauseId: damage.pauseId,
        answer: { refundCents: -5, restock: "yes" },
      });
      expect(invalid.status).toBe(400);
      expect((invalid.body.issues as { path: string }[]).map((i) => i.path).sort()).toEqual([
        "refundCents",
        "restock",
      ]);
      const both = await post(base, "/webhooks/answer", {
        ...lead,
        pauseId: damage.pauseId,
        answer: { refundCents: 100 },
        reply: "full",
      });
      expect(both.status).toBe(400);
      const neither = await post(base, "/webhooks/answer", { ...lead, pauseId: damage.pauseId });
      expect(neither.status).toBe(400);

      const open = await server.app.pauses.list({ tenantId: "acme", status: PauseStatus.Pending });
      const kinds = Object.fromEntries(
        open.filter((p) => p.threadId.startsWith("order:ord_600")).map((p) => [p.threadId, p.kind]),
      );
      expect(kinds).toEqual({ "order:ord_6005": PauseKind.Question, "order:ord_6006": PauseKind.Approval });

      const full = await post(base, "/webhooks/answer", { ...lead, pauseId: damage.pauseId, reply: "full" });
      expect(full.body.output).toEqual({ text: "Done: refunded 25.00 of 25.00 (rf_acme_ord_6005)." });
      const approved = await post(base, "/webhooks/approval", {
        ...manager,
        pauseId: refund.pauseId,
        approved: true,
      });
      expect(approved.body.output).toEqual({ text: "Done: refunded 25.00 (rf_acme_ord_6006)." });
    });

    test("an answered amount above the price reaches the agent as a tool error; nothing is refunded", async () => {
      await post(base, "/webhooks/refund-request", damageClaim("ord_6007"));
      const { pauseId } = await questionFor(base, "order:ord_6007");
      const tooMuch = await post(base, "/webhooks/answer", {
        ...lead,
        pauseId,
        answer: { refundCents: 4000 },
      });
      expect(tooMuch.body).toMatchObject({
        status: "completed",
        output: {
          text: "I could not do it: the warehouse lead settled on 40.00, more than the 25.00 paid for ord_6007.",
        },
      });
    });

    test("a small claim is answered at once by the channel: no question is posted and nothing waits", async () => {
      const done = await post(base, "/webhooks/refund-request", damageClaim("ord_6008", 400));
      expect(done).toEqual({
        status: 200,
        body: {
          state: "completed",
          threadId: "order:ord_6008",
          output: {
            text: "Done: refunded 4.00 of 4.00 (rf_acme_ord_6008); small claim (up to 5.00), refunded without inspection.",
          },
        },
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
      const started = await post(first.url, "/webhooks/refund-request", refundRequest("ord_9001"));
      expect(started.status).toBe(202);
      pauseId = (await questionFor(first.url, "order:ord_9001")).pauseId;
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(first.output()).toContain("SIGTERM: closing");

    const second = await startChild({ AGBOSS_SQLITE_PATH: sqlitePath });
    try {
      expect(await outbox(second.url)).toEqual([]); // the outbox was the old process's; the pause is in the file
      const approved = await post(second.url, "/webhooks/approval", {
        ...manager,
        pauseId,
        reply: "approve",
      });
      expect(approved).toEqual({
        status: 200,
        body: {
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
