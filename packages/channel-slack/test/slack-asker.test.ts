import {
  AgentFailedError,
  type App,
  type ChannelAsk,
  type ChannelRef,
  type ChannelWithdrawal,
  createApp,
  ExecutionContext,
  type ExecutionFrame,
  findCause,
  MemoryLogger,
  memoryStore,
  PauseKind,
  PauseResolution,
  PauseStatus,
} from "@agboss/core";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import {
  SlackAsker,
  SlackChannelError,
  SlackHistoryDirectory,
  type SlackMessageDirectory,
  type SlackMessageRef,
  type SlackSettings,
} from "../src/index.js";
import { FakeSlack } from "./fixtures/fake-slack.js";
import { BOT_TOKEN, SIGNING_SECRET } from "./fixtures/harness.js";
import { RELEASES, ReleaseApplication, ReleaseWorkflowStart } from "./fixtures/release-app.js";

let slack: FakeSlack;

beforeEach(async () => {
  slack = await new FakeSlack(BOT_TOKEN).start();
});

afterEach(async () => {
  await slack.stop();
});

function settings(more: Partial<SlackSettings> = {}): SlackSettings {
  return { botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: slack.url, env: {}, ...more };
}

async function appWith(more: Partial<SlackSettings> = {}, logger = new MemoryLogger()) {
  return createApp(ReleaseApplication, {
    store: memoryStore(),
    providers: [SlackAsker.with(settings(more))],
    logger,
  });
}

function deploy(threadId: string) {
  return [
    ReleaseWorkflowStart,
    { text: "deploy api 1.4.2 to staging" },
    { threadId, ownerId: "dana", tenant: { tenantId: "acme" } },
  ] as const;
}

const frame: ExecutionFrame = {
  tenant: { tenantId: "acme" },
  ownerId: "dana",
  threadId: "t-retry",
  executionId: "e-retry",
  rootExecutionId: "e-retry",
  workflow: { name: "release-workflow", version: "1.0.0" },
  env: "test",
  step: undefined,
  signal: new AbortController().signal,
};

/** Makes the app's store drop every ref, as pauses asked by an earlier version of the channel have none. */
function withoutRefs(app: App): void {
  const pauses = app.store.pauses;
  const markSent = pauses.markSent.bind(pauses);
  vi.spyOn(pauses, "markSent").mockImplementation((tenantId, pauseId, fence) =>
    markSent(tenantId, pauseId, fence),
  );
}

function withdrawalOf(ref: unknown, more: Partial<ChannelWithdrawal> = {}): ChannelWithdrawal {
  return {
    pauseId: ask.pauseId,
    kind: PauseKind.Approval,
    value: ask.value,
    resolution: PauseResolution.Withdrawn,
    ref: ref as ChannelRef,
    ...more,
  };
}

const ask: ChannelAsk = {
  pauseId: "Q2hhbm5lbFBhdXNlMDAwMQ",
  kind: PauseKind.Approval,
  value: { tool: "deploy-tool", agent: "release-agent", callId: "call-1", arguments: { service: "api" } },
};

describe("SlackAsker", () => {
  test("a send retried with the same pauseId finds its first message and does not post again", async () => {
    const app = await appWith();
    const asker = app.get(SlackAsker);
    const options = { channel: RELEASES, text: "Deploy *api*?" };
    const first = await ExecutionContext.run(frame, () => asker.askApproval(ask, options));
    const again = await ExecutionContext.run(frame, () => asker.askApproval(ask, options));
    expect(slack.topLevel(RELEASES)).toHaveLength(1);
    expect(slack.callsOf("chat.postMessage")).toHaveLength(1);
    // Both tries keep the same ref: whichever one the pause records names the one message.
    const ts = slack.topLevel(RELEASES)[0]?.ts;
    expect(first.kind).toBe("await-reply");
    expect(first.ref).toEqual({ v: 1, channel: RELEASES, ts, question: { text: "Deploy *api*?" } });
    expect(again.ref).toEqual(first.ref);
    await app.close();
  });

  test("a channel given by name is refused before anything is posted", async () => {
    const app = await appWith();
    const asker = app.get(SlackAsker);
    const sent = ExecutionContext.run(frame, () =>
      asker.askApproval(ask, { channel: "#deploys", text: "Deploy?" }),
    );
    await expect(sent).rejects.toThrow(SlackChannelError);
    await expect(sent).rejects.toThrow(/by its id \(e\.g\. C0123ABCD/);
    expect(slack.calls).toEqual([]);
    await app.close();
  });

  test("a pause asked with the other kind's method is refused before anything is posted", async () => {
    const app = await appWith();
    const asker = app.get(SlackAsker);
    const asked = ExecutionContext.run(frame, () =>
      asker.askQuestion(ask, { channel: RELEASES, text: "How many?" }),
    );
    await expect(asked).rejects.toMatchObject({ code: "slack.bad-setting" });
    await expect(asked).rejects.toThrow(/is an approval: ask it with askApproval/);
    const question = { ...ask, kind: PauseKind.Question };
    await expect(
      ExecutionContext.run(frame, () => asker.askApproval(question, { channel: RELEASES, text: "Deploy?" })),
    ).rejects.toThrow(/ask it with askQuestion/);
    expect(slack.calls).toEqual([]);
    await app.close();
  });

  test("a post Slack refuses fails the step with what to check, and the pause is never sent", async () => {
    slack.outsideOf.add(RELEASES);
    const app = await appWith();
    const error = await app.execute(...deploy("t-refused")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentFailedError);
    const cause = findCause(error, SlackChannelError);
    expect(cause?.code).toBe("slack.post-failed");
    expect(cause?.message).toContain("not_in_channel");
    expect(cause?.message).toContain("/invite");
    const pauses = await app.pauses.list({ tenantId: "acme" });
    expect(pauses.map((p) => p.status)).toEqual([PauseStatus.Cancelled]);
    await app.close();
  });

  test("a history read refused before a post is logged, and the question is posted anyway", async () => {
    slack.failNext.set("conversations.history", "missing_scope");
    const logs = new MemoryLogger();
    const app = await appWith({}, logs);
    await app.execute(...deploy("t-scope"));
    expect(slack.topLevel(RELEASES)).toHaveLength(1);
    expect(logs.entries.find((e) => e.event === "slack.lookup-failed")?.fields).toMatchObject({
      channel: RELEASES,
      tool: "deploy-tool",
      error: "missing_scope",
      tenantId: "acme",
    });
    await app.close();
  });

  test("with the ref the pause keeps, withdraw edits a question far beyond the history, reading none", async () => {
    const logs = new MemoryLogger();
    const app = await appWith(
      { directory: (client) => new SlackHistoryDirectory(client, { pageSize: 2, maxPages: 2 }) },
      logs,
    );
    await app.execute(...deploy("t-far"));
    const [question] = slack.topLevel(RELEASES);
    const pauseId = String(question?.metadata?.event_payload.pause_id);
    const stored = await app.store.pauses.findByTenantIdAndPauseId("acme", pauseId);
    expect(stored?.channelRef).toEqual({
      v: 1,
      channel: RELEASES,
      ts: question?.ts,
      question: {
        text: "Deploy *api* 1.4.2 to staging?",
        fields: ["*Service*\napi", "*Version*\n1.4.2", "*Environment*\nstaging"],
      },
    });
    // Far more messages after it than the directory would ever read.
    for (let i = 0; i < 10; i++)
      slack.addReply({ channel: RELEASES, user: "UBOB0001", text: `chatter ${i}` });
    const before = slack.calls.length;
    await app.cancel("t-far", { tenantId: "acme" });
    expect(slack.calls.slice(before).map((c) => c.method)).toEqual(["chat.update"]);
    const [withdrawn] = slack.topLevel(RELEASES);
    expect(withdrawn?.metadata?.event_payload).toMatchObject({ pause_id: pauseId, state: "withdrawn" });
    expect(withdrawn?.blocks).toEqual([
      {
        type: "section",
        block_id: "agboss_question",
        text: { type: "mrkdwn", text: "Deploy *api* 1.4.2 to staging?" },
        fields: [
          { type: "mrkdwn", text: "*Service*\napi" },
          { type: "mrkdwn", text: "*Version*\n1.4.2" },
          { type: "mrkdwn", text: "*Environment*\nstaging" },
        ],
      },
      {
        type: "context",
        block_id: "agboss_status",
        elements: [
          {
            type: "mrkdwn",
            text: ":no_entry_sign: Withdrawn: the request was cancelled, no answer is needed.",
          },
        ],
      },
    ]);
    expect(logs.entries.filter((e) => e.event.startsWith("slack.withdraw"))).toEqual([]);
    expect(logs.entries.filter((e) => e.event === "channel.withdraw-failed")).toEqual([]);
    await app.close();
  });

  test("a pause that kept no ref is found within the history the directory may read; older ones are left with a note", async () => {
    const logs = new MemoryLogger();
    const app = await appWith(
      { directory: (client) => new SlackHistoryDirectory(client, { pageSize: 2, maxPages: 2 }) },
      logs,
    );
    withoutRefs(app);
    // Two messages after the question: it is on the second page, which withdraw still reads.
    await app.execute(...deploy("t-near"));
    slack.addReply({ channel: RELEASES, user: "UBOB0001", text: "one" });
    slack.addReply({ channel: RELEASES, user: "UBOB0001", text: "two" });
    await app.cancel("t-near", { tenantId: "acme" });
    const [near] = slack.topLevel(RELEASES);
    expect(near?.metadata?.event_payload.state).toBe("withdrawn");

    // Four after it: beyond two pages of two, so it keeps its buttons and the log says why.
    await app.execute(...deploy("t-far"));
    for (const text of ["a", "b", "c", "d"]) slack.addReply({ channel: RELEASES, user: "UBOB0001", text });
    await app.cancel("t-far", { tenantId: "acme" });
    const far = slack.topLevel(RELEASES).find((m) => m.metadata !== undefined && m !== near);
    expect(far?.metadata?.event_payload.state).toBe("open");
    expect(logs.entries.filter((e) => e.event === "slack.withdraw-not-found")).toHaveLength(1);
    expect(logs.entries.filter((e) => e.event === "channel.withdraw-failed")).toEqual([]);
    await app.close();
  });

  test("a directory of your own is told where each question went, asked before each post, and on withdraw only without a ref", async () => {
    const where = new Map<string, SlackMessageRef>();
    const asked: { pauseId: string; recent: boolean }[] = [];
    const directory: SlackMessageDirectory = {
      find: ({ pauseId, recent }) => {
        asked.push({ pauseId, recent: recent === true });
        return Promise.resolve(where.get(pauseId));
      },
      remember: (pauseId, message) => {
        where.set(pauseId, message);
        return Promise.resolve();
      },
    };
    const app = await appWith({ directory: () => directory });
    await app.execute(...deploy("t-own"));
    const [first] = slack.topLevel(RELEASES);
    expect([...where.values()]).toEqual([{ channel: RELEASES, ts: first?.ts }]);
    expect(asked.map((a) => a.recent)).toEqual([true]);
    await app.cancel("t-own", { tenantId: "acme" });
    expect(slack.topLevel(RELEASES)[0]?.metadata?.event_payload.state).toBe("withdrawn");
    expect(asked.map((a) => a.recent)).toEqual([true]);
    expect(slack.callsOf("conversations.history")).toEqual([]);

    // Without a ref the directory is asked; it names the message only, so that message is read once.
    withoutRefs(app);
    await app.execute(...deploy("t-own-old"));
    await app.cancel("t-own-old", { tenantId: "acme" });
    expect(asked.map((a) => a.recent)).toEqual([true, true, false]);
    expect(slack.topLevel(RELEASES)[1]?.metadata?.event_payload.state).toBe("withdrawn");
    expect(slack.callsOf("conversations.history").map((c) => c.args.limit)).toEqual(["1"]);
    await app.close();
  });

  test("a question too large to keep in the ref is read back once on withdraw, with no search", async () => {
    const app = await appWith();
    const asker = app.get(SlackAsker);
    const text = `Deploy *api*? ${"Release notes. ".repeat(150)}`;
    const outcome = await ExecutionContext.run(frame, () =>
      asker.askApproval(ask, { channel: RELEASES, text, fields: { Service: "api" } }),
    );
    const [posted] = slack.topLevel(RELEASES);
    expect(outcome.ref).toEqual({ v: 1, channel: RELEASES, ts: posted?.ts });
    const before = slack.calls.length;
    await ExecutionContext.run(frame, () =>
      asker.withdraw(withdrawalOf(outcome.ref), { channel: RELEASES, note: "Superseded." }),
    );
    const calls = slack.calls.slice(before);
    expect(calls.map((c) => [c.method, c.args.limit])).toEqual([
      ["conversations.history", "1"],
      ["chat.update", undefined],
    ]);
    const [withdrawn] = slack.topLevel(RELEASES);
    expect(withdrawn?.blocks?.[0]).toMatchObject({
      block_id: "agboss_question",
      text: { text },
      fields: [{ type: "mrkdwn", text: "*Service*\napi" }],
    });
    expect(withdrawn?.metadata?.event_payload.state).toBe("withdrawn");
    await app.close();
  });

  test("a ref that is not this channel's falls back to the directory; one with an unreadable question is read back", async () => {
    const app = await appWith();
    const asker = app.get(SlackAsker);
    const unreadable: unknown[] = [
      "1760000000.000100",
      { v: 2, channel: RELEASES, ts: "1760000000.000100" },
      { v: 1, channel: "#releases", ts: "1760000000.000100" },
      { v: 1, channel: RELEASES, ts: "yesterday" },
      [RELEASES, "1760000000.000100"],
    ];
    for (const [i, ref] of unreadable.entries()) {
      const pauseId = `${ask.pauseId.slice(0, -2)}${String(i).padStart(2, "0")}`;
      await ExecutionContext.run(frame, () =>
        asker.askApproval({ ...ask, pauseId }, { channel: RELEASES, text: `Deploy *api* #${i}?` }),
      );
      const before = slack.calls.length;
      await ExecutionContext.run(frame, () =>
        asker.withdraw({ ...withdrawalOf(ref), pauseId }, { channel: RELEASES }),
      );
      // The directory's search: a page of history with the metadata, then the edit.
      expect(slack.calls.slice(before).map((c) => [c.method, c.args.limit])).toEqual([
        ["conversations.history", "200"],
        ["chat.update", undefined],
      ]);
      const message = slack.topLevel(RELEASES).find((m) => m.metadata?.event_payload.pause_id === pauseId);
      expect(message?.metadata?.event_payload.state).toBe("withdrawn");
    }

    const outcome = await ExecutionContext.run(frame, () =>
      asker.askApproval(ask, { channel: RELEASES, text: "Deploy *api*?" }),
    );
    const before = slack.calls.length;
    const ref = { ...(outcome.ref as object), question: { text: 42 } };
    await ExecutionContext.run(frame, () => asker.withdraw(withdrawalOf(ref), { channel: RELEASES }));
    expect(slack.calls.slice(before).map((c) => [c.method, c.args.limit])).toEqual([
      ["conversations.history", "1"],
      ["chat.update", undefined],
    ]);
    const message = slack.topLevel(RELEASES).find((m) => m.metadata?.event_payload.pause_id === ask.pauseId);
    expect(message?.metadata?.event_payload.state).toBe("withdrawn");
    expect(message?.blocks?.[0]).toMatchObject({ text: { text: "Deploy *api*?" } });
    await app.close();
  });

  test("a ref to a message deleted since is noted in the log, and the withdrawal does not fail", async () => {
    const logs = new MemoryLogger();
    const app = await appWith({}, logs);
    const asker = app.get(SlackAsker);
    const gone = { v: 1, channel: RELEASES, ts: "1700000000.000100" };
    await ExecutionContext.run(frame, () =>
      asker.withdraw(withdrawalOf({ ...gone, question: { text: "Deploy *api*?" } }), { channel: RELEASES }),
    );
    await ExecutionContext.run(frame, () => asker.withdraw(withdrawalOf(gone), { channel: RELEASES }));
    expect(slack.calls.map((c) => c.method)).toEqual(["chat.update", "conversations.history"]);
    expect(logs.entries.filter((e) => e.event === "slack.withdraw-not-found").map((e) => e.fields)).toEqual([
      { channel: RELEASES, tool: "deploy-tool", executionId: "e-retry", tenantId: "acme" },
      { channel: RELEASES, tool: "deploy-tool", executionId: "e-retry", tenantId: "acme" },
    ]);
    await app.close();
  });
});

describe("configuration", () => {
  test("settings come from the environment: the token, the signing secret and the API URL", async () => {
    const app = await createApp(ReleaseApplication, {
      store: memoryStore(),
      providers: [
        SlackAsker.with({
          env: { SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: slack.url },
        }),
      ],
    });
    await app.execute(...deploy("t-env"));
    expect(slack.topLevel(RELEASES)).toHaveLength(1);
    await app.close();
  });

  test("a missing token fails the application's start, saying what to set", async () => {
    const started = createApp(ReleaseApplication, {
      store: memoryStore(),
      providers: [SlackAsker.with({ env: {} })],
    });
    await expect(started).rejects.toThrow(SlackChannelError);
    await expect(started).rejects.toThrow(/set SLACK_BOT_TOKEN to the app's Bot User OAuth Token/);
  });

  test("an API URL that is no http(s) URL is refused at start", async () => {
    for (const apiUrl of ["not a url", "ftp://slack.example/api/"]) {
      const started = createApp(ReleaseApplication, {
        store: memoryStore(),
        providers: [SlackAsker.with({ env: { SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_API_URL: apiUrl } })],
      });
      await expect(started).rejects.toMatchObject({ code: "slack.bad-setting" });
    }
  });
});
