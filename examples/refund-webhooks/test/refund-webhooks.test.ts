import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { modelProvidersFor } from "../src/models.js";
import { type RefundServer, startRefundServer } from "../src/server.js";
import { outbox, post, startChild } from "./http.js";

const scriptedEnv = {}; // no key: scripted models, no network
let dataDir: string;
let server: RefundServer;
let base: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agboss-refund-webhooks-"));
  server = await startRefundServer({ sqlitePath: join(dataDir, "desk.sqlite"), port: 0, env: scriptedEnv });
  base = server.url;
});

afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const manager = { tenantId: "acme", managerId: "manager-17" };

function refundRequest(orderId: string, text = "The parcel never arrived.", amountCents = 2500) {
  return { orderId, amountCents, tenantId: "acme", userId: "dana", text };
}

async function questionFor(url: string, threadId: string) {
  const message = (await outbox(url)).find((m) => m.threadId === threadId);
  expect(message, `no question for ${threadId} in the outbox`).toBeDefined();
  return message as NonNullable<typeof message>;
}

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

    const again = await post(base, "/webhooks/approval", {
      ...manager,
      managerId: "manager-99",
      pauseId: question.pauseId,
      reply: "lgtm",
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: "already_resolved", resolution: "replied", by: "manager-17" });
    expect(typeof again.body.at).toBe("string");
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

describe("choosing the models", () => {
  test("scripted without a key, the OpenAI-compatible provider with one", async () => {
    expect(modelProvidersFor({}).kind).toBe("scripted");
    expect(modelProvidersFor({ OPENAI_API_KEY: "sk-test" }).kind).toBe("openai-compatible");
    const real = await startRefundServer({
      sqlitePath: join(dataDir, "openai.sqlite"),
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
    const first = await startChild(sqlitePath);
    let pauseId: string;
    try {
      const started = await post(first.url, "/webhooks/refund-request", refundRequest("ord_9001"));
      expect(started.status).toBe(202);
      pauseId = (await questionFor(first.url, "order:ord_9001")).pauseId;
    } finally {
      expect(await first.stop()).toBe(0);
    }
    expect(first.output()).toContain("SIGTERM: closing");

    const second = await startChild(sqlitePath);
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
