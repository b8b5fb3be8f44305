import { PauseStatus } from "@agboss/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createAgbossInbox, type InboxPause } from "../src/index.js";
import { CaseStart, OpsLedger } from "./fixtures/ops-desk.js";
import {
  ask,
  call,
  cookieCaller,
  type Instance,
  openTestStore,
  startInstance,
  type TestStore,
} from "./harness.js";

let store: TestStore;
let one: Instance;

beforeAll(async () => {
  store = await openTestStore("sqlite");
  one = await startInstance(store);
  await ask(one.app, "refund ord_1 2500", "refund:ord_1");
  await ask(one.app, "deploy api 1.4.2", "deploy:api");
  await ask(one.app, "assess ord_7", "damage:ord_7");
});
afterAll(async () => {
  await one?.close();
  await store?.dispose();
});

async function pausesOf(who: string): Promise<InboxPause[]> {
  const { status, body } = await call(one.url, "/inbox/api/pauses", { as: who });
  expect(status).toBe(200);
  return body.pauses as InboxPause[];
}

describe("the list", () => {
  test("shows an owner their own questions, newest first, and a manager the roles they answer", async () => {
    const dana = await pausesOf("dana");
    expect(dana.map((p) => p.tool)).toEqual(["assess-tool", "deploy-tool"]);
    expect(dana[1]).toMatchObject({
      kind: "approval",
      answeredBy: "thread-owner",
      role: "deploy-confirmation-channel",
      roleDescription: "Confirm the deployment you asked for",
      workflow: { name: "desk-workflow", version: "1.0.0" },
      arguments: { service: "api", version: "1.4.2" },
      readsReplies: false,
    });
    expect(dana[0]?.schemas.answer).toMatchObject({ required: ["refundCents", "restock", "condition"] });

    const mia = await pausesOf("mia");
    expect(mia).toHaveLength(1);
    expect(mia[0]).toMatchObject({
      tool: "refund-tool",
      answeredBy: "channel",
      readsReplies: true,
      arguments: { orderId: "ord_1", amountCents: 2500, cardNumber: "***" },
    });
    expect(mia[0]?.schemas.arguments).toMatchObject({ properties: { cardNumber: { "x-sensitive": true } } });
  });

  test("shows at most maxPauses, the newest", async () => {
    const narrow = await startInstance(store, { maxPauses: 1 });
    try {
      const { body } = await call(narrow.url, "/inbox/api/pauses", { as: "dana" });
      expect((body.pauses as InboxPause[]).map((p) => p.tool)).toEqual(["assess-tool"]);
    } finally {
      await narrow.close();
    }
  });

  test("shows another tenant nothing of this one, and asks a stranger to sign in", async () => {
    expect(await pausesOf("globex")).toEqual([]);
    const anonymous = await call(one.url, "/inbox/api/pauses");
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe("http.unauthenticated");
  });

  test("refuses a caller whose role the application does not have, naming the roles it has", async () => {
    const { status, body } = await call(one.url, "/inbox/api/pauses", { as: "typo" });
    expect(status).toBe(500);
    expect(body.code).toBe("inbox.caller-invalid");
  });
});

describe("answers", () => {
  test("come from the page only, and only to pauses in the caller's inbox", async () => {
    const [refund] = await pausesOf("mia");
    const id = refund?.pauseId ?? "";
    const noHeader = await fetch(`${one.url}/inbox/api/pauses/${id}/answer`, {
      method: "POST",
      headers: { cookie: "who=mia", "content-type": "application/json" },
      body: JSON.stringify({ decision: { approved: true } }),
    });
    expect(noHeader.status).toBe(403);
    expect(((await noHeader.json()) as { code: string }).code).toBe("inbox.not-from-page");
    for (const who of ["dana", "globex"]) {
      const { status, body } = await call(one.url, `/inbox/api/pauses/${id}/answer`, {
        as: who,
        body: { decision: { approved: true } },
      });
      expect([who, status, body.code]).toEqual([who, 404, "inbox.pause-unknown"]);
    }
    const still = await one.app.store.pauses.findByTenantIdAndPauseId("acme", id);
    expect(still?.status).toBe(PauseStatus.Pending);
  });

  test("an override is checked by the server, and a sensitive field left alone keeps its value", async () => {
    const [refund] = await pausesOf("mia");
    const url = `/inbox/api/pauses/${refund?.pauseId}/answer`;
    const invalid = await call(one.url, url, {
      as: "mia",
      body: { decision: { approved: true, overrideArguments: { orderId: "ord_1", amountCents: -5 } } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe("dto.invalid");
    expect(JSON.stringify(invalid.body.issues)).toContain("amountCents");
    const valid = await call(one.url, url, {
      as: "mia",
      body: { decision: { approved: true, overrideArguments: { orderId: "ord_1", amountCents: 1900 } } },
    });
    expect(valid).toMatchObject({ status: 200, body: { outcome: "recorded", pauseId: refund?.pauseId } });
    await one.app.idle();
    expect(one.app.get(OpsLedger).runs).toContainEqual({
      tool: "refund-tool",
      args: { orderId: "ord_1", amountCents: 1900, cardNumber: "4242424242424242" },
    });
    // The manager who answered may read the execution's trail; its owner's other threads stay hers.
    const trail = await call(one.url, `/inbox/api/executions/${refund?.executionId}`, { as: "mia" });
    expect(trail.body.entries).toMatchObject([
      {
        tool: "refund-tool",
        responder: "mia",
        decision: { approved: true, overrideArguments: { amountCents: 1900, cardNumber: "***" } },
      },
    ]);
    const again = await call(one.url, url, { as: "mia", body: { decision: { approved: false } } });
    expect(again).toMatchObject({
      status: 200,
      body: { outcome: "already_resolved", resolution: "replied", by: "mia" },
    });
  });

  test("a reply the interpreter cannot read is a 422 with its reason, and the pause keeps waiting", async () => {
    await ask(one.app, "refund ord_2 900", "refund:ord_2");
    const [refund] = await pausesOf("mia");
    const url = `/inbox/api/pauses/${refund?.pauseId}/answer`;
    const unread = await call(one.url, url, { as: "mia", body: { reply: "hmm, maybe" } });
    expect(unread.status).toBe(422);
    expect(unread.body).toMatchObject({
      code: "pause.uninterpretable-reply",
      reason: '"hmm, maybe" is neither "approve" nor "reject: <why>".',
    });
    expect((await pausesOf("mia")).map((p) => p.pauseId)).toEqual([refund?.pauseId]);
    const read = await call(one.url, url, { as: "mia", body: { reply: "reject: the card expired" } });
    expect(read.body.outcome).toBe("recorded");
    expect(await pausesOf("mia")).toEqual([]);
  });

  test("a body with two answers, or none, changes nothing", async () => {
    const [, deploy] = await pausesOf("dana");
    const url = `/inbox/api/pauses/${deploy?.pauseId}/answer`;
    for (const body of [{ decision: { approved: true }, reply: "yes" }, {}, { answer: 1, extra: true }]) {
      const refused = await call(one.url, url, { as: "dana", body });
      expect(refused.status).toBe(400);
    }
    expect((await pausesOf("dana")).map((p) => p.tool)).toContain("deploy-tool");
  });

  test("a question is answered with its DTO, and the audit trail says who answered what, and when", async () => {
    const [assess] = await pausesOf("dana");
    const answer = { refundCents: 700, restock: false, condition: "cracked", note: "lid cracked" };
    const sent = await call(one.url, `/inbox/api/pauses/${assess?.pauseId}/answer`, {
      as: "dana",
      body: { answer },
    });
    expect(sent.body.outcome).toBe("recorded");
    await one.app.idle();
    const audit = await call(one.url, `/inbox/api/executions/${assess?.executionId}`, { as: "dana" });
    expect(audit.status).toBe(200);
    expect(audit.body).toMatchObject({ workflow: { name: "desk-workflow" }, status: "completed" });
    expect(audit.body.entries).toMatchObject([
      {
        tool: "assess-tool",
        resolution: "replied",
        responder: "dana",
        answer: { refundCents: 700, restock: false, condition: "cracked", note: "***" },
      },
    ]);
    for (const who of ["mia", "globex"]) {
      const hidden = await call(one.url, `/inbox/api/executions/${assess?.executionId}`, { as: who });
      expect([who, hidden.status]).toEqual([who, 404]);
    }
  });
});

describe("the audit trail", () => {
  test("of a tree whose question was asked in a child workflow is the root's, and lists each answer once", async () => {
    const paused = await one.app.execute(
      CaseStart,
      { text: "assess ord_9" },
      { threadId: "case:ord_9", ownerId: "dana", tenant: { tenantId: "acme" } },
    );
    const [assess] = (await pausesOf("dana")).filter((p) => p.threadId === "case:ord_9");
    // Asked in the child; the trail the page opens for it is the tree's root's.
    expect(assess?.executionId).not.toBe(paused.executionId);
    expect(assess?.rootExecutionId).toBe(paused.executionId);
    const answer = { refundCents: 300, restock: true, condition: "scratched", note: "box only" };
    const sent = await call(one.url, `/inbox/api/pauses/${assess?.pauseId}/answer`, {
      as: "dana",
      body: { answer },
    });
    expect(sent.body.outcome).toBe("recorded");
    await one.app.idle();
    const audit = await call(one.url, `/inbox/api/executions/${assess?.rootExecutionId}`, { as: "dana" });
    expect(audit.body).toMatchObject({ workflow: { name: "case-workflow" }, status: "completed" });
    expect(audit.body.entries).toMatchObject([
      { tool: "assess-tool", resolution: "replied", responder: "dana" },
    ]);
    expect(audit.body.entries).toHaveLength(1);
    // A child has no record of its own: its id names no trail.
    const child = await call(
      one.url,
      `/inbox/api/executions/${encodeURIComponent(assess?.executionId ?? "")}`,
      {
        as: "dana",
      },
    );
    expect(child.status).toBe(404);
  });

  test("of a child's pause answered by a role: the role's person reads the tree's trail while it waits and once answered, another tenant does not", async () => {
    const paused = await one.app.execute(
      CaseStart,
      { text: "refund ord_8 2500" },
      { threadId: "case:ord_8", ownerId: "dana", tenant: { tenantId: "acme" } },
    );
    const [refund] = (await pausesOf("mia")).filter((p) => p.threadId === "case:ord_8");
    expect(refund?.rootExecutionId).toBe(paused.executionId);
    const trailOf = (who: string) =>
      call(one.url, `/inbox/api/executions/${refund?.rootExecutionId}`, { as: who });
    const waiting = await trailOf("mia");
    expect(waiting.status).toBe(200);
    expect(waiting.body.entries).toMatchObject([{ tool: "refund-tool", resolution: "pending" }]);
    const sent = await call(one.url, `/inbox/api/pauses/${refund?.pauseId}/answer`, {
      as: "mia",
      body: { decision: { approved: true } },
    });
    // The receipt names the tree's root, whose trail holds the answer.
    expect(sent.body).toMatchObject({ outcome: "recorded", rootExecutionId: paused.executionId });
    expect(sent.body.executionId).not.toBe(paused.executionId);
    await one.app.idle();
    const answered = await trailOf("mia");
    expect(answered.body.entries).toMatchObject([
      { tool: "refund-tool", resolution: "replied", responder: "mia" },
    ]);
    expect(answered.body.entries).toHaveLength(1);
    expect((await trailOf("globex")).status).toBe(404);
  });
});

describe("the page", () => {
  test("is served at the mount path with and without its slash, with its files and a strict policy", async () => {
    for (const path of ["/inbox", "/inbox/"]) {
      const res = await fetch(`${one.url}${path}`);
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
      const html = await res.text();
      expect(html).toContain('<base href="/inbox/">');
      expect(html).toContain("<title>Inbox · ops-desk-application</title>");
    }
    const script = await fetch(`${one.url}/inbox/assets/inbox.js`);
    expect(script.headers.get("content-type")).toContain("text/javascript");
    const etag = script.headers.get("etag") ?? "";
    expect(
      (await fetch(`${one.url}/inbox/assets/inbox.js`, { headers: { "if-none-match": etag } })).status,
    ).toBe(304);
    for (const path of ["/inbox/assets/nope.js", "/inbox/elsewhere/"]) {
      expect([path, (await fetch(`${one.url}${path}`)).status]).toEqual([path, 404]);
    }
  });

  test("names where the browser reaches it when a framework strips the mount path (Express)", async () => {
    const stripped = createAgbossInbox(one.app, { authenticate: cookieCaller, publicPath: "/tools/inbox/" });
    const html = await (await stripped.request("/")).text();
    expect(html).toContain('<base href="/tools/inbox/">');
    expect(() => createAgbossInbox(one.app, { authenticate: cookieCaller, publicPath: "tools" })).toThrow(
      /publicPath must start and end with "\/"/,
    );
  });
});
