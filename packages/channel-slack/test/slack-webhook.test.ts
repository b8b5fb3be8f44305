import { createApp, memoryStore } from "@agboss/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createSlackWebhook,
  SlackAsker,
  SlackChannelError,
  signSlackRequest,
  verifySlackSignature,
} from "../src/index.js";
import { BOT_TOKEN, type Harness, SIGNING_SECRET, startHarness } from "./fixtures/harness.js";
import { ReleaseApplication } from "./fixtures/release-app.js";
import { deliver, urlVerification } from "./fixtures/slack-person.js";

const NOW = Date.parse("2026-11-30T09:00:00Z");
const seconds = Math.floor(NOW / 1000);

describe("verifySlackSignature", () => {
  const body = "payload=%7B%22type%22%3A%22block_actions%22%7D";
  const headers = signSlackRequest({ signingSecret: SIGNING_SECRET, body, timestamp: seconds });

  test("accepts the signature Slack computes, as a string, bytes, a record or fetch Headers", () => {
    expect(headers["x-slack-signature"]).toMatch(/^v0=[0-9a-f]{64}$/);
    const check = { signingSecret: SIGNING_SECRET, now: NOW };
    expect(verifySlackSignature({ ...check, body, headers })).toEqual({ ok: true });
    expect(
      verifySlackSignature({ ...check, body: Buffer.from(body), headers: new Headers(headers) }),
    ).toEqual({
      ok: true,
    });
    const nodeStyle = {
      "X-Slack-Signature": [headers["x-slack-signature"]],
      "x-slack-request-timestamp": headers["x-slack-request-timestamp"],
    };
    expect(verifySlackSignature({ ...check, body, headers: nodeStyle })).toEqual({ ok: true });
  });

  test("refuses a changed body, another secret, a missing header and a timestamp five minutes off", () => {
    const check = { signingSecret: SIGNING_SECRET, now: NOW, headers };
    expect(verifySlackSignature({ ...check, body: `${body}x` })).toMatchObject({ ok: false });
    expect(verifySlackSignature({ ...check, body, signingSecret: "another" })).toMatchObject({ ok: false });
    expect(
      verifySlackSignature({
        ...check,
        body,
        headers: { "x-slack-signature": headers["x-slack-signature"] },
      }),
    ).toMatchObject({ ok: false, reason: expect.stringContaining("missing") });
    expect(verifySlackSignature({ ...check, body, now: NOW + 301_000 })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("300 seconds"),
    });
    expect(verifySlackSignature({ ...check, body, now: NOW - 301_000 })).toMatchObject({ ok: false });
    expect(verifySlackSignature({ ...check, body, now: NOW + 299_000 })).toEqual({ ok: true });
    const short = { ...headers, "x-slack-signature": "v0=abc" };
    expect(verifySlackSignature({ ...check, body, headers: short })).toMatchObject({ ok: false });
  });
});

describe("the webhook's HTTP side", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  test("answers the Events API's url_verification with its challenge", async () => {
    const reply = await deliver(
      h.url,
      urlVerification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"),
      {
        secret: SIGNING_SECRET,
      },
    );
    expect(reply).toMatchObject({
      status: 200,
      body: JSON.stringify({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" }),
    });
  });

  test("a signed body that is neither JSON nor a payload form is a 400; other payloads are acknowledged and ignored", async () => {
    const bad = await deliver(
      h.url,
      { body: "hello", contentType: "text/plain" },
      { secret: SIGNING_SECRET },
    );
    expect(bad.status).toBe(400);
    const view = await deliver(
      h.url,
      {
        body: `payload=${encodeURIComponent(JSON.stringify({ type: "view_submission", view: {} }))}`,
        contentType: "application/x-www-form-urlencoded",
      },
      { secret: SIGNING_SECRET },
    );
    const otherButton = await deliver(
      h.url,
      {
        body: `payload=${encodeURIComponent(
          JSON.stringify({
            type: "block_actions",
            user: { id: "U1" },
            actions: [{ action_id: "someone_else", value: "x" }],
          }),
        )}`,
        contentType: "application/x-www-form-urlencoded",
      },
      { secret: SIGNING_SECRET },
    );
    await h.webhook.idle();
    expect([view.status, otherButton.status]).toEqual([200, 200]);
    expect(h.slack.calls).toEqual([]);
  });

  test("the node:http listener takes POST only, and refuses an oversized body", async () => {
    expect((await fetch(h.url)).status).toBe(405);
    const huge = await fetch(h.url, { method: "POST", body: "x".repeat(1024 * 1024 + 1) });
    expect(huge.status).toBe(413);
  });

  test("handle works without any server: a raw body and headers in, a response out", async () => {
    const body = JSON.stringify({ type: "url_verification", challenge: "c-1" });
    const response = await h.webhook.handle({
      body,
      headers: new Headers({
        "content-type": "application/json",
        ...signSlackRequest({ signingSecret: SIGNING_SECRET, body }),
      }),
    });
    expect(response).toEqual({
      status: 200,
      headers: { "content-type": "application/json" },
      body: '{"challenge":"c-1"}',
    });
  });
});

test("a webhook needs the signing secret, and says where to find it; replyWaitMs is a number of milliseconds", async () => {
  const app = await createApp(ReleaseApplication, {
    store: memoryStore(),
    providers: [SlackAsker.with({ botToken: BOT_TOKEN, env: {} })],
  });
  expect(() => createSlackWebhook(app)).toThrow(SlackChannelError);
  expect(() => createSlackWebhook(app)).toThrow(/set SLACK_SIGNING_SECRET to the app's Signing Secret/);
  expect(() => createSlackWebhook(app, { signingSecret: SIGNING_SECRET })).not.toThrow();
  for (const replyWaitMs of [-1, Number.NaN]) {
    expect(() => createSlackWebhook(app, { signingSecret: SIGNING_SECRET, replyWaitMs })).toThrow(
      expect.objectContaining({ code: "slack.bad-setting" }),
    );
  }
  expect(() => createSlackWebhook(app, { signingSecret: SIGNING_SECRET, replyWaitMs: 0 })).not.toThrow();
  await app.close();
});
