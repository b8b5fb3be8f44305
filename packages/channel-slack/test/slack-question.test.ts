import { ExecutionStatus, PauseStatus } from "@agboss/core";
import { afterEach, beforeEach, expect, test } from "vitest";
import { SlackActionId, SlackBlockId } from "../src/index.js";
import type { FakeMessage } from "./fixtures/fake-slack.js";
import { type Harness, SIGNING_SECRET, startHarness } from "./fixtures/harness.js";
import { RELEASES, ReleaseLedger, ReleaseWorkflowStart } from "./fixtures/release-app.js";
import { click, deliver, messageEvent } from "./fixtures/slack-person.js";

let h: Harness;

beforeEach(async () => {
  h = await startHarness();
});

afterEach(async () => {
  await h.close();
});

const signed = { secret: SIGNING_SECRET };

async function askReplicas() {
  return h.asking.execute(
    ReleaseWorkflowStart,
    { text: "scale api" },
    { threadId: "scale:api", ownerId: "dana", tenant: { tenantId: "acme" } },
  );
}

function question(): FakeMessage {
  const [message] = h.slack.topLevel(RELEASES);
  expect(message, "no question was posted").toBeDefined();
  return message as FakeMessage;
}

function texts(message: FakeMessage, blockId: string): string[] {
  const block = (message.blocks ?? []).find((b) => (b as { block_id: string }).block_id === blockId) as
    | { elements: { text: string | { text: string } }[] }
    | undefined;
  return (block?.elements ?? []).map((e) => (typeof e.text === "string" ? e.text : e.text.text));
}

test("a question role asks for an answer in the thread, and offers its choices as buttons", async () => {
  const paused = await askReplicas();
  expect(paused.status).toBe(ExecutionStatus.Paused);
  const message = question();
  expect(message.metadata?.event_payload).toMatchObject({
    kind: "question",
    state: "open",
    tenant_id: "acme",
  });
  expect(texts(message, SlackBlockId.Actions)).toEqual(["2 replicas", "4 replicas"]);
  expect(texts(message, SlackBlockId.Hint)).toEqual(["Answer in this message's thread."]);
});

test("a reply in the thread answers the question through the role's interpreter", async () => {
  const paused = await askReplicas();
  const parent = question();
  const vague = h.slack.addReply({ channel: RELEASES, user: "UERIN001", text: "lots", thread_ts: parent.ts });
  await deliver(h.url, messageEvent(vague), signed);
  await h.webhook.idle();
  expect(h.slack.thread(RELEASES, parent.ts).map((m) => m.text)).toEqual([
    "lots",
    "<@UERIN001> I could not read that as an answer: Answer with a number of replicas from 1 to 20.",
  ]);
  expect((await h.answering.pauses.list({ tenantId: "acme" })).map((p) => p.status)).toEqual([
    PauseStatus.Pending,
  ]);

  const clear = h.slack.addReply({
    channel: RELEASES,
    user: "UERIN001",
    text: "3 please",
    thread_ts: parent.ts,
  });
  await deliver(h.url, messageEvent(clear), signed);
  await h.webhook.idle();

  expect(h.answering.get(ReleaseLedger).scaled).toEqual([{ service: "api", replicas: 3 }]);
  const record = await h.answering.record(paused.executionId, { tenantId: "acme" });
  expect(record?.pauses.map((p) => [p.responder, p.answer])).toEqual([["UERIN001", { replicas: 3 }]]);
  expect(texts(question(), SlackBlockId.Status)[0]).toMatch(/^:speech_balloon: Answered by <@UERIN001> /);
  expect(texts(question(), SlackBlockId.Actions)).toEqual([]);
});

test("a choice button answers with the value it carries", async () => {
  await askReplicas();
  await deliver(h.url, click(question(), `${SlackActionId.AnswerPrefix}1`, "UERIN001"), signed);
  await h.webhook.idle();
  expect(h.answering.get(ReleaseLedger).scaled).toEqual([{ service: "api", replicas: 4 }]);
  expect(question().metadata?.event_payload.state).toBe("answered");
});

test("an Approve button's decision sent to a question is refused with what it expects", async () => {
  await askReplicas();
  // A hand-made click: the question has no Approve button, but a request can claim one.
  const message = structuredClone(question());
  const [, actions] = message.blocks ?? [];
  const [first] = (actions as { elements: { action_id: string }[] }).elements;
  if (first !== undefined) first.action_id = SlackActionId.Approve;
  await deliver(h.url, click(message, SlackActionId.Approve, "UERIN001"), signed);
  await h.webhook.idle();
  expect(h.slack.ephemerals).toHaveLength(1);
  expect(h.slack.ephemerals[0]?.text).toMatch(
    /^That answer does not fit this question \(.+\)\. Nothing was recorded\.$/,
  );
  expect(h.answering.get(ReleaseLedger).scaled).toEqual([]);
});

test("a reply read for longer than replyWaitMs is acknowledged first and recorded after; Slack's retry meanwhile is not read twice", async () => {
  await h.close();
  h = await startHarness({ webhook: { replyWaitMs: 100 } });
  const paused = await askReplicas();
  const ledger = h.answering.get(ReleaseLedger);
  let release = () => {};
  ledger.readGate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const reply = h.slack.addReply({
    channel: RELEASES,
    user: "UERIN001",
    text: "3 please",
    thread_ts: question().ts,
  });
  const delivery = messageEvent(reply);

  const first = await deliver(h.url, delivery, signed);
  expect(first.status).toBe(200);
  // Slack has its 200 while the interpreter is still reading: nothing is recorded yet.
  expect(ledger.read).toEqual(["3 please"]);
  expect((await h.answering.pauses.list({ tenantId: "acme" })).map((p) => p.status)).toEqual([
    PauseStatus.Pending,
  ]);
  const retry = await deliver(h.url, delivery, {
    ...signed,
    headers: { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" },
  });
  expect(retry.status).toBe(200);

  release();
  await h.webhook.idle();
  expect(ledger.read).toEqual(["3 please"]);
  expect(ledger.scaled).toEqual([{ service: "api", replicas: 3 }]);
  const record = await h.answering.record(paused.executionId, { tenantId: "acme" });
  expect(record?.status).toBe(ExecutionStatus.Completed);
  expect(texts(question(), SlackBlockId.Status)[0]).toMatch(/^:speech_balloon: Answered by <@UERIN001> /);
  expect(h.slack.ephemerals).toEqual([]);
});

test("a cancelled question is withdrawn through its ref, with its choices gone and no history read", async () => {
  await askReplicas();
  const calls = h.slack.calls.length;
  await h.answering.cancel("scale:api", { tenantId: "acme" });
  expect(h.slack.calls.slice(calls).map((c) => c.method)).toEqual(["chat.update"]);
  const withdrawn = question();
  expect(withdrawn.metadata?.event_payload).toMatchObject({ kind: "question", state: "withdrawn" });
  expect(texts(withdrawn, SlackBlockId.Actions)).toEqual([]);
  expect(texts(withdrawn, SlackBlockId.Status)).toEqual([
    ":no_entry_sign: Withdrawn: the request was cancelled, no answer is needed.",
  ]);
});
