import {
  AgentFailedError,
  type ChannelAsk,
  createApp,
  ExecutionContext,
  type ExecutionFrame,
  findCause,
  MemoryLogger,
  memoryStore,
  PauseKind,
  PauseStatus,
} from "@agboss/core";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
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
    await ExecutionContext.run(frame, () => asker.askApproval(ask, options));
    await ExecutionContext.run(frame, () => asker.askApproval(ask, options));
    expect(slack.topLevel(RELEASES)).toHaveLength(1);
    expect(slack.callsOf("chat.postMessage")).toHaveLength(1);
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

  test("withdraw finds the question within the history it may read, and leaves older ones with a note", async () => {
    const logs = new MemoryLogger();
    const app = await appWith(
      { directory: (client) => new SlackHistoryDirectory(client, { pageSize: 2, maxPages: 2 }) },
      logs,
    );
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

  test("a directory of your own is told where each question went, and is asked instead of the history", async () => {
    const where = new Map<string, SlackMessageRef>();
    const directory: SlackMessageDirectory = {
      find: ({ pauseId }) => Promise.resolve(where.get(pauseId)),
      remember: (pauseId, message) => {
        where.set(pauseId, message);
        return Promise.resolve();
      },
    };
    const app = await appWith({ directory: () => directory });
    await app.execute(...deploy("t-own"));
    expect([...where.values()]).toEqual([{ channel: RELEASES, ts: slack.topLevel(RELEASES)[0]?.ts }]);
    await app.cancel("t-own", { tenantId: "acme" });
    expect(slack.topLevel(RELEASES)[0]?.metadata?.event_payload.state).toBe("withdrawn");
    // No search: only the single read of the message to keep its question when it is closed.
    expect(slack.callsOf("conversations.history").map((c) => c.args.limit)).toEqual(["1"]);
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
