import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExecutionStatus } from "@agboss/core";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { LocalSlack } from "../src/local-slack.js";
import { type DeployGate, startDeployGate } from "../src/server.js";

let dir: string;
let slack: LocalSlack;
let gate: DeployGate;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "agboss-slack-deploy-gate-"));
  slack = await new LocalSlack().start();
  gate = await startDeployGate({
    sqlitePath: join(dir, "gate.sqlite"),
    port: 0,
    slack: { botToken: slack.botToken, signingSecret: slack.signingSecret, apiUrl: slack.apiUrl, env: {} },
    slackChannel: "C0DEPLOYS",
  });
  slack.deliverTo(`${gate.url}/slack`);
});

afterEach(async () => {
  await gate.close();
  await slack.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gate.url}${path}`, { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function deployments(): Promise<unknown[]> {
  const res = await fetch(`${gate.url}/deploys`);
  return ((await res.json()) as { deployments: unknown[] }).deployments;
}

const request = { service: "api", version: "1.4.2", environment: "production", requestedBy: "dana" };

describe("the deploy gate", () => {
  test("a deployment waits for a release manager's click in Slack, then runs", async () => {
    expect(await post("/deploys", request)).toEqual({
      status: 202,
      body: { state: "awaiting_approval", threadId: "deploy:api@1.4.2:production" },
    });
    expect(await deployments()).toEqual([]);
    const [question] = slack.messages();
    expect(question).toMatchObject({
      channel: "C0DEPLOYS",
      text: ":rotating_light: Deploy *api* 1.4.2 to *production*?",
      buttons: [
        { label: "Deploy", actionId: "agboss_approve" },
        { label: "Hold", actionId: "agboss_reject" },
      ],
      state: "open",
    });

    expect(await slack.press({ actionId: "agboss_approve", user: "URELEASE1" })).toBe(200);
    await gate.webhook.idle();

    expect(await deployments()).toMatchObject([
      { service: "api", version: "1.4.2", environment: "production", requestedBy: "dana" },
    ]);
    const [answered] = slack.messages();
    expect(answered?.buttons).toEqual([]);
    expect(answered?.state).toBe("answered");
    expect(answered?.status).toMatch(/^:white_check_mark: Approved by <@URELEASE1> /);
    const [summary] = await gate.app.pauses.list({ threadId: "deploy:api@1.4.2:production" });
    const record = await gate.app.record(summary?.executionId ?? "");
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(record?.output).toEqual({ text: "Deployed: api 1.4.2 is live on production." });
  });

  test("a reply in the thread holds it with a reason, and the agent says why", async () => {
    await post("/deploys", request);
    await slack.reply({ text: "not sure", user: "URELEASE1" });
    await gate.webhook.idle();
    expect(slack.messages()[0]?.thread).toEqual([
      { user: "URELEASE1", text: "not sure" },
      {
        user: "ULOCALBOT",
        text: '<@URELEASE1> I could not read that as an answer: Reply "ship it" to deploy, or "hold: &lt;why&gt;" to refuse.',
      },
    ]);

    await slack.reply({ text: "hold: change freeze until Monday", user: "URELEASE1" });
    await gate.webhook.idle();
    expect(await deployments()).toEqual([]);
    expect(slack.messages()[0]?.status).toMatch(
      /^:x: Rejected by <@URELEASE1> .*: change freeze until Monday$/,
    );
    const [summary] = await gate.app.pauses.list({ threadId: "deploy:api@1.4.2:production" });
    const record = await gate.app.record(summary?.executionId ?? "");
    expect(record?.output).toEqual({
      text: "Not deployed: the call was rejected by URELEASE1: change freeze until Monday.",
    });
  });

  test("a cancelled request takes the question back; a late click is told so", async () => {
    await post("/deploys", request);
    expect(await post("/deploys", request)).toMatchObject({ status: 409 });
    expect(await post("/deploys/cancel", request)).toMatchObject({ status: 200 });
    const [withdrawn] = slack.messages();
    expect(withdrawn).toMatchObject({ buttons: [], state: "withdrawn" });
    expect(withdrawn?.status).toBe(
      ":no_entry_sign: Withdrawn: the request was cancelled, no answer is needed.",
    );
    expect(await deployments()).toEqual([]);
  });

  test("an invalid request is refused before anything is asked", async () => {
    const refused = await post("/deploys", { ...request, version: "latest" });
    expect(refused.status).toBe(400);
    expect(slack.messages()).toEqual([]);
  });
});

test("pnpm start runs against the local stand-in for Slack when SLACK_BOT_TOKEN is not set", async () => {
  const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@agboss/source", "src/main.ts"], {
    cwd: join(import.meta.dirname, ".."),
    env: { ...process.env, PORT: "0", SLACK_BOT_TOKEN: "", AGBOSS_SQLITE_PATH: join(dir, "child.sqlite") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.stderr?.on("data", (chunk: Buffer) => {
    output += String(chunk);
  });
  const base = await new Promise<{ gate: string; slack: string }>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += String(chunk);
      const gateUrl = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      const slackUrl = /local stand-in at (http:\/\/\S+)/.exec(output)?.[1];
      if (gateUrl !== undefined && slackUrl !== undefined && output.includes("/reply")) {
        resolve({ gate: gateUrl, slack: slackUrl });
      }
    });
    void exited.then((code) => reject(new Error(`exited (${code}) before listening:\n${output}`)));
  });
  try {
    const started = await fetch(`${base.gate}/deploys`, { method: "POST", body: JSON.stringify(request) });
    expect(started.status).toBe(202);
    const pressed = await fetch(`${base.slack}/press`, {
      method: "POST",
      body: JSON.stringify({ button: "deploy", user: "URELEASE1" }),
    });
    expect(await pressed.json()).toEqual({ delivered: 200 });
    await expect
      .poll(
        async () =>
          ((await (await fetch(`${base.gate}/deploys`)).json()) as { deployments: unknown[] }).deployments,
      )
      .toHaveLength(1);
  } finally {
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }
});
