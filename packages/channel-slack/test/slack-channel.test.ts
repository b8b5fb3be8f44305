import { ExecutionStatus, PauseStatus, StoreUnavailableError } from "@agboss/core";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { PAUSE_EVENT_TYPE, SlackActionId, SlackBlockId } from "../src/index.js";
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

async function startDeploy(threadId = "release:api-1.4.2") {
  return h.asking.execute(
    ReleaseWorkflowStart,
    { text: "deploy api 1.4.2 to production" },
    { threadId, ownerId: "dana", tenant: { tenantId: "acme" } },
  );
}

function question(): FakeMessage {
  const [message] = h.slack.topLevel(RELEASES);
  expect(message, "no question was posted").toBeDefined();
  return message as FakeMessage;
}

function blockIds(message: FakeMessage): string[] {
  return (message.blocks ?? []).map((b) => (b as { block_id: string }).block_id);
}

function statusOf(message: FakeMessage): string {
  const block = (message.blocks ?? []).find(
    (b) => (b as { block_id: string }).block_id === SlackBlockId.Status,
  );
  return (block as { elements: { text: string }[] } | undefined)?.elements[0]?.text ?? "";
}

function pauseIdOf(message: FakeMessage): string {
  return String(message.metadata?.event_payload.pause_id);
}

describe("an approval in Slack, answered on another instance", () => {
  test("a pause posts buttons keyed by the pause; a signed click on the second instance runs the tool", async () => {
    const paused = await startDeploy();
    expect(paused.status).toBe(ExecutionStatus.Paused);

    const message = question();
    expect(message.metadata?.event_type).toBe(PAUSE_EVENT_TYPE);
    const pauseId = pauseIdOf(message);
    expect(pauseId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(message.metadata?.event_payload).toEqual({
      pause_id: pauseId,
      tenant_id: "acme",
      kind: "approval",
      state: "open",
    });
    expect(blockIds(message)).toEqual([SlackBlockId.Question, SlackBlockId.Actions, SlackBlockId.Hint]);
    expect(message.text).toBe("Deploy *api* 1.4.2 to production?");
    // The pause is in the metadata and the buttons' values, never in what people read.
    const visible = JSON.stringify([
      message.text,
      message.blocks?.filter((b) => (b as { type: string }).type !== "actions"),
    ]);
    expect(visible).not.toContain(pauseId);
    const actions = message.blocks?.[1] as { elements: { action_id: string; value: string }[] };
    expect(actions.elements.map((e) => e.action_id)).toEqual([SlackActionId.Approve, SlackActionId.Reject]);
    expect(actions.elements.every((e) => e.value.includes(pauseId))).toBe(true);

    const answered = await deliver(h.url, click(message, SlackActionId.Approve, "UALICE01"), signed);
    expect(answered).toMatchObject({ status: 200, body: "" });
    await h.webhook.idle();

    expect(h.answering.get(ReleaseLedger).deploys).toEqual([
      { service: "api", version: "1.4.2", environment: "production" },
    ]);
    expect(h.asking.get(ReleaseLedger).deploys).toEqual([]);
    const record = await h.answering.record(paused.executionId, { tenantId: "acme" });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(record?.output).toEqual({ text: JSON.stringify({ status: "deployed api 1.4.2 to production" }) });
    expect(record?.pauses.map((p) => p.responder)).toEqual(["UALICE01"]);

    const updated = question();
    expect(blockIds(updated)).toEqual([SlackBlockId.Question, SlackBlockId.Status]);
    expect(statusOf(updated)).toMatch(/^:white_check_mark: Approved by <@UALICE01> <!date\^\d+\^/);
    expect(updated.metadata?.event_payload.state).toBe("answered");
    expect(h.slack.topLevel(RELEASES)).toHaveLength(1);
  });

  test("Reject refuses the call: the tool does not run and the message says who rejected", async () => {
    const paused = await startDeploy();
    await deliver(h.url, click(question(), SlackActionId.Reject, "UALICE01"), signed);
    await h.webhook.idle();

    expect(h.answering.get(ReleaseLedger).deploys).toEqual([]);
    const record = await h.answering.record(paused.executionId, { tenantId: "acme" });
    expect(record?.output).toEqual({
      text: "Tool error: the call was rejected by UALICE01",
    });
    expect(statusOf(question())).toMatch(/^:x: Rejected by <@UALICE01> /);
  });

  test("a reply in the thread is read by the role's interpreter", async () => {
    const paused = await startDeploy();
    const reply = h.slack.addReply({
      channel: RELEASES,
      user: "UBOB0001",
      text: "lgtm",
      thread_ts: question().ts,
    });
    const delivered = await deliver(h.url, messageEvent(reply), signed);
    expect(delivered).toMatchObject({ status: 200, body: "" });
    // The interpreter reads it well within replyWaitMs, so the answer was recorded before the 200.
    const stored = await h.asking.store.pauses.findByTenantIdAndPauseId("acme", pauseIdOf(question()));
    expect([PauseStatus.Resolved, PauseStatus.Taken]).toContain(stored?.status);
    expect(stored?.answer).toMatchObject({ decision: { approved: true }, responder: "UBOB0001" });
    await h.webhook.idle();

    expect(h.answering.get(ReleaseLedger).deploys).toHaveLength(1);
    const record = await h.answering.record(paused.executionId, { tenantId: "acme" });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(record?.pauses.map((p) => [p.responder, p.decision])).toEqual([["UBOB0001", { approved: true }]]);
    expect(statusOf(question())).toMatch(/^:white_check_mark: Approved by <@UBOB0001> /);
  });

  test("a reply the interpreter cannot read gets its reason in the thread, and the pause keeps waiting", async () => {
    await startDeploy();
    const parent = question();
    const vague = h.slack.addReply({
      channel: RELEASES,
      user: "UBOB0001",
      text: "hmm, maybe later",
      thread_ts: parent.ts,
    });
    await deliver(h.url, messageEvent(vague), signed);
    await h.webhook.idle();

    const answers = h.slack.thread(RELEASES, parent.ts).filter((m) => m.bot_id !== undefined);
    expect(answers.map((m) => m.text)).toEqual([
      '<@UBOB0001> I could not read that as an answer: Reply "lgtm" to deploy, or "reject: &lt;why&gt;".',
    ]);
    const waiting = await h.answering.pauses.list({ tenantId: "acme", threadId: "release:api-1.4.2" });
    expect(waiting.map((p) => p.status)).toEqual([PauseStatus.Pending]);
    expect(blockIds(question())).toContain(SlackBlockId.Actions);
    expect(h.answering.get(ReleaseLedger).deploys).toEqual([]);

    // The bot's own message in the thread comes back as an event too: it is not an answer.
    const [botReply] = answers;
    await deliver(h.url, messageEvent(botReply as FakeMessage), signed);
    const clear = h.slack.addReply({
      channel: RELEASES,
      user: "UBOB0001",
      text: "reject: freeze week",
      thread_ts: parent.ts,
    });
    await deliver(h.url, messageEvent(clear), signed);
    await h.webhook.idle();
    expect(statusOf(question())).toMatch(/^:x: Rejected by <@UBOB0001> .*: freeze week$/);
  });

  test("a bad or stale signature gets 401 and changes nothing", async () => {
    await startDeploy();
    const approve = click(question(), SlackActionId.Approve, "UMALLORY");
    const calls = h.slack.calls.length;

    const wrongSecret = await deliver(h.url, approve, { secret: "not-the-signing-secret" });
    const stale = await deliver(h.url, approve, {
      secret: SIGNING_SECRET,
      timestamp: Math.floor(Date.now() / 1000) - 6 * 60,
    });
    const tampered = await fetch(h.url, {
      method: "POST",
      headers: {
        "content-type": approve.contentType,
        "x-slack-request-timestamp": String(Math.floor(Date.now() / 1000)),
        "x-slack-signature": "v0=0000",
      },
      body: approve.body,
    });
    const unsigned = await fetch(h.url, { method: "POST", body: approve.body });
    await h.webhook.idle();

    expect([wrongSecret.status, stale.status, tampered.status, unsigned.status]).toEqual([
      401, 401, 401, 401,
    ]);
    expect(h.slack.calls.length).toBe(calls);
    const waiting = await h.answering.pauses.list({ tenantId: "acme" });
    expect(waiting.map((p) => p.status)).toEqual([PauseStatus.Pending]);
    expect(h.answering.get(ReleaseLedger).deploys).toEqual([]);
    expect(h.logs.entries.filter((e) => e.event === "slack.signature-rejected")).toHaveLength(4);
  });

  test("a second click is told who answered first, and the tool runs once", async () => {
    await startDeploy();
    // Both people see the message with its buttons: the second clicks before the update reaches them.
    const message = structuredClone(question());
    await deliver(h.url, click(message, SlackActionId.Approve, "UALICE01"), signed);
    await h.webhook.idle();
    await deliver(h.url, click(message, SlackActionId.Reject, "UCAROL01"), signed);
    await h.webhook.idle();

    expect(h.answering.get(ReleaseLedger).deploys).toHaveLength(1);
    expect(h.slack.ephemerals).toHaveLength(1);
    expect(h.slack.ephemerals[0]).toMatchObject({ channel: RELEASES, user: "UCAROL01" });
    expect(h.slack.ephemerals[0]?.text).toMatch(
      /^This question was already answered by <@UALICE01> <!date\^\d+\^.*>\. Your answer was not recorded\.$/,
    );
    expect(statusOf(question())).toMatch(/^:white_check_mark: Approved by <@UALICE01> /);
  });

  test("the person who answered, clicking again, is told their first answer is recorded and stands", async () => {
    await startDeploy();
    const message = structuredClone(question());
    await deliver(h.url, click(message, SlackActionId.Approve, "UALICE01"), signed);
    await h.webhook.idle();
    await deliver(h.url, click(message, SlackActionId.Reject, "UALICE01"), signed);
    await h.webhook.idle();

    expect(h.answering.get(ReleaseLedger).deploys).toHaveLength(1);
    expect(h.slack.ephemerals.map((e) => [e.user, e.text])).toEqual([
      [
        "UALICE01",
        expect.stringMatching(
          /^You already answered this question <!date\^\d+\^.*>: that answer is recorded and stands\.$/,
        ),
      ],
    ]);
    expect(statusOf(question())).toMatch(/^:white_check_mark: Approved by <@UALICE01> /);
  });

  test("app.cancel withdraws the question: the message loses its buttons and says why", async () => {
    await startDeploy();
    const before = structuredClone(question());
    const calls = h.slack.calls.length;
    await h.asking.cancel("release:api-1.4.2", { tenantId: "acme" });
    // Straight to the message the pause's ref names: one edit, no history read.
    expect(h.slack.calls.slice(calls).map((c) => c.method)).toEqual(["chat.update"]);

    const withdrawn = question();
    expect(blockIds(withdrawn)).toEqual([SlackBlockId.Question, SlackBlockId.Status]);
    expect(statusOf(withdrawn)).toBe(
      ":no_entry_sign: Withdrawn: the request was cancelled, no answer is needed.",
    );
    expect(withdrawn.metadata?.event_payload.state).toBe("withdrawn");

    // Someone who still had the message open with its buttons is told it was withdrawn.
    await deliver(h.url, click(before, SlackActionId.Approve, "UALICE01"), signed);
    await h.webhook.idle();
    expect(h.slack.ephemerals.map((e) => [e.user, e.text])).toEqual([
      [
        "UALICE01",
        expect.stringMatching(
          /^This question was withdrawn <!date\^\d+\^.*>: no answer is needed any more\.$/,
        ),
      ],
    ]);
    expect(statusOf(question())).toBe(
      ":no_entry_sign: Withdrawn: the request was cancelled, no answer is needed.",
    );
    expect(h.answering.get(ReleaseLedger).deploys).toEqual([]);
  });

  test("a cancel on the second instance edits the message through the ref in the SQLite file, reading no history", async () => {
    await startDeploy();
    const pauseId = pauseIdOf(question());
    const stored = await h.answering.store.pauses.findByTenantIdAndPauseId("acme", pauseId);
    expect(stored?.channelRef).toMatchObject({ v: 1, channel: RELEASES, ts: question().ts });
    const calls = h.slack.calls.length;

    await h.answering.cancel("release:api-1.4.2", { tenantId: "acme" });

    expect(h.slack.calls.slice(calls).map((c) => c.method)).toEqual(["chat.update"]);
    const withdrawn = question();
    expect(blockIds(withdrawn)).toEqual([SlackBlockId.Question, SlackBlockId.Status]);
    expect(withdrawn.metadata?.event_payload).toEqual({
      pause_id: pauseId,
      tenant_id: "acme",
      kind: "approval",
      state: "withdrawn",
    });
    expect(withdrawn.text).toBe("Deploy *api* 1.4.2 to production?");
    expect(statusOf(withdrawn)).toBe(
      ":no_entry_sign: Withdrawn: the request was cancelled, no answer is needed.",
    );
    expect(h.logs.entries.filter((e) => e.event === "channel.withdraw-failed")).toEqual([]);
  });

  test("a pause that kept no ref (asked by an earlier version) is still withdrawn, through the directory", async () => {
    // The asking instance's store drops the ref, as a pause recorded before refs were kept has none.
    const pauses = h.asking.store.pauses;
    const markSent = pauses.markSent.bind(pauses);
    vi.spyOn(pauses, "markSent").mockImplementation((tenantId, pauseId, fence) =>
      markSent(tenantId, pauseId, fence),
    );
    await startDeploy();
    const pauseId = pauseIdOf(question());
    expect((await pauses.findByTenantIdAndPauseId("acme", pauseId))?.channelRef).toBeUndefined();
    h.slack.addReply({ channel: RELEASES, user: "UBOB0001", text: "anyone around?" });
    const calls = h.slack.calls.length;

    await h.answering.cancel("release:api-1.4.2", { tenantId: "acme" });

    // The history directory's search, then the edit.
    const history = h.slack.calls.slice(calls).filter((c) => c.method === "conversations.history");
    expect(history.map((c) => [c.args.limit, c.args.include_all_metadata])).toEqual([["200", "true"]]);
    expect(h.slack.calls.at(-1)?.method).toBe("chat.update");
    expect(question().metadata?.event_payload.state).toBe("withdrawn");
    expect(blockIds(question())).toEqual([SlackBlockId.Question, SlackBlockId.Status]);
  });

  test("a click is recorded and audited before Slack gets its 200; the tool runs after, in the background", async () => {
    const paused = await startDeploy();
    const pauseId = pauseIdOf(question());
    let release = () => {};
    h.answering.get(ReleaseLedger).gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Recording is made slow: a 200 sent before it would find the pause still waiting.
    const pauses = h.answering.store.pauses;
    const resolve = pauses.resolve.bind(pauses);
    vi.spyOn(pauses, "resolve").mockImplementation(async (...args) => {
      await new Promise((done) => setTimeout(done, 200));
      return resolve(...args);
    });

    const answered = await deliver(h.url, click(question(), SlackActionId.Approve, "UALICE01"), signed);
    expect(answered).toMatchObject({ status: 200, body: "" });
    // Seen from the other instance, through the SQLite file: the answer is stored and in the audit trail,
    // while the tool is still held at its gate.
    const stored = await h.asking.store.pauses.findByTenantIdAndPauseId("acme", pauseId);
    expect([PauseStatus.Resolved, PauseStatus.Taken]).toContain(stored?.status);
    expect(stored?.answer).toMatchObject({ decision: { approved: true }, responder: "UALICE01" });
    const audited = await h.asking.record(paused.executionId, { tenantId: "acme" });
    expect(audited?.pauses.map((p) => p.responder)).toEqual(["UALICE01"]);
    expect(audited?.status).not.toBe(ExecutionStatus.Completed);
    expect(h.answering.get(ReleaseLedger).deploys).toEqual([]);

    release();
    // idle() covers the move the app runs in the background, not only the message's update.
    await h.webhook.idle();
    expect(h.answering.get(ReleaseLedger).deploys).toHaveLength(1);
    const done = await h.asking.record(paused.executionId, { tenantId: "acme" });
    expect(done?.status).toBe(ExecutionStatus.Completed);
    expect(statusOf(question())).toMatch(/^:white_check_mark: Approved by <@UALICE01> /);
  });

  test("an answer with the wrong kind of credential is refused, and the pause keeps waiting", async () => {
    await h.close();
    h = await startHarness({ webhook: { answerAs: (source) => ({ ownerId: source.userId }) } });
    await startDeploy();
    await deliver(h.url, click(question(), SlackActionId.Approve, "UALICE01"), signed);
    await h.webhook.idle();

    expect(h.slack.ephemerals.map((e) => [e.user, e.text])).toEqual([
      [
        "UALICE01",
        "You may not answer this question from Slack (pause.wrong-answerer). Nothing was recorded.",
      ],
    ]);
    const waiting = await h.answering.pauses.list({ tenantId: "acme" });
    expect(waiting.map((p) => p.status)).toEqual([PauseStatus.Pending]);
    expect(blockIds(question())).toContain(SlackBlockId.Actions);
  });

  test("the tenant comes from the configured mapping when one is given", async () => {
    await h.close();
    const seen: unknown[] = [];
    h = await startHarness({
      webhook: {
        tenant: (source) => {
          seen.push(source);
          return source.teamId === "TACME0001" ? "acme" : "nobody";
        },
      },
    });
    await startDeploy();
    const message = question();
    await deliver(h.url, click(message, SlackActionId.Approve, "UALICE01"), signed);
    await h.webhook.idle();
    expect(h.answering.get(ReleaseLedger).deploys).toHaveLength(1);
    expect(seen).toEqual([
      {
        via: "button",
        userId: "UALICE01",
        teamId: "TACME0001",
        enterpriseId: undefined,
        channelId: RELEASES,
        askedFor: "acme",
      },
    ]);
  });

  test("an answer that cannot be recorded still gets its 200; the person is told, and the pause keeps waiting", async () => {
    await h.close();
    h = await startHarness({
      webhook: {
        tenant: () => {
          throw new Error("the tenant directory is down");
        },
      },
    });
    await startDeploy();
    const answered = await deliver(h.url, click(question(), SlackActionId.Approve, "UALICE01"), signed);
    expect(answered).toMatchObject({ status: 200, body: "" });
    await h.webhook.idle();

    expect(h.slack.ephemerals.map((e) => [e.user, e.text])).toEqual([
      ["UALICE01", "Your answer could not be recorded. The application's log has the details."],
    ]);
    expect(h.logs.entries.find((e) => e.event === "slack.answer-failed")?.fields).toMatchObject({
      channel: RELEASES,
      error: "the tenant directory is down",
    });
    const waiting = await h.answering.pauses.list({ tenantId: "acme" });
    expect(waiting.map((p) => p.status)).toEqual([PauseStatus.Pending]);
    expect(blockIds(question())).toContain(SlackBlockId.Actions);
  });

  test("an answer the application's storage could not take: the person is asked to answer again, and answering again records it", async () => {
    await h.close();
    let down = true;
    h = await startHarness({
      webhook: {
        tenant: () => {
          if (down) throw new StoreUnavailableError("the tenant table could not be read");
          return "acme";
        },
      },
    });
    await startDeploy();
    await deliver(h.url, click(question(), SlackActionId.Approve, "UALICE01"), signed);
    await h.webhook.idle();
    expect(h.slack.ephemerals.map((e) => [e.user, e.text])).toEqual([
      [
        "UALICE01",
        "Your answer could not be recorded just now (store.unavailable): the application could not reach " +
          "its storage. Please answer again in a minute.",
      ],
    ]);
    expect((await h.answering.pauses.list({ tenantId: "acme" })).map((p) => p.status)).toEqual([
      PauseStatus.Pending,
    ]);

    down = false;
    await deliver(h.url, click(question(), SlackActionId.Approve, "UALICE01"), signed);
    await h.webhook.idle();
    expect((await h.answering.pauses.list({ tenantId: "acme" })).map((p) => p.status)).not.toEqual([
      PauseStatus.Pending,
    ]);
  });

  test("replies in threads that are not questions, and top-level messages, are left alone", async () => {
    const chatter = h.slack.addReply({ channel: RELEASES, user: "UBOB0001", text: "who broke staging?" });
    const inThread = h.slack.addReply({
      channel: RELEASES,
      user: "UCAROL01",
      text: "lgtm",
      thread_ts: chatter.ts,
    });
    await deliver(h.url, messageEvent(chatter), signed);
    await deliver(h.url, messageEvent(inThread), signed);
    await h.webhook.idle();
    const again = h.slack.addReply({
      channel: RELEASES,
      user: "UCAROL01",
      text: "approve",
      thread_ts: chatter.ts,
    });
    await deliver(h.url, messageEvent(again), signed);
    await h.webhook.idle();

    // One read of the thread's parent, remembered as not a question; nothing posted.
    expect(h.slack.callsOf("conversations.history")).toHaveLength(1);
    expect(h.slack.callsOf("chat.postMessage")).toHaveLength(0);
    expect(h.slack.ephemerals).toEqual([]);
  });

  test("an event Slack delivers twice is answered once", async () => {
    await startDeploy();
    const parent = question();
    const vague = h.slack.addReply({
      channel: RELEASES,
      user: "UBOB0001",
      text: "maybe?",
      thread_ts: parent.ts,
    });
    const delivery = messageEvent(vague);
    await deliver(h.url, delivery, signed);
    await deliver(h.url, delivery, {
      ...signed,
      headers: { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" },
    });
    await h.webhook.idle();
    expect(h.slack.thread(RELEASES, parent.ts).filter((m) => m.bot_id !== undefined)).toHaveLength(1);
  });

  test("waitUntil is handed what follows the 200: the message's update and the execution's move", async () => {
    await h.close();
    const handed: Promise<void>[] = [];
    h = await startHarness({ webhook: { waitUntil: (work) => handed.push(work) } });
    const paused = await startDeploy();
    let release = () => {};
    h.answering.get(ReleaseLedger).gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const answered = await deliver(h.url, click(question(), SlackActionId.Approve, "UALICE01"), signed);
    expect(answered.status).toBe(200);
    expect(handed).toHaveLength(1);
    let settled = false;
    void handed[0]?.then(() => {
      settled = true;
    });
    await new Promise((done) => setTimeout(done, 50));
    // The tool is held at its gate: the work handed over is not done yet.
    expect(settled).toBe(false);

    release();
    // No idle(): what waitUntil holds is enough for the tool to run and the message to be updated.
    await expect(handed[0]).resolves.toBeUndefined();
    expect(h.answering.get(ReleaseLedger).deploys).toHaveLength(1);
    expect((await h.asking.record(paused.executionId, { tenantId: "acme" }))?.status).toBe(
      ExecutionStatus.Completed,
    );
    expect(statusOf(question())).toMatch(/^:white_check_mark: Approved by <@UALICE01> /);
  });
});
