import { fileURLToPath } from "node:url";
import type { SlackSettings } from "@agboss/channel-slack";
import { SQLITE_PATH_ENV } from "@agboss/store-sqlite";
import { LocalSlack } from "./local-slack.js";
import { startDeployGate } from "./server.js";

const sqlitePath =
  process.env[SQLITE_PATH_ENV] ??
  fileURLToPath(new URL("../.agboss/data/slack-deploy-gate.sqlite", import.meta.url));
const port = Number(process.env.PORT ?? "3000");
const host = process.env.HOST ?? "127.0.0.1";

// With SLACK_BOT_TOKEN, the real Slack (SLACK_SIGNING_SECRET and SLACK_DEPLOY_CHANNEL too); without it,
// a local stand-in that the real @slack/web-api client talks to.
const real = (process.env.SLACK_BOT_TOKEN ?? "") !== "";
let local: LocalSlack | undefined;
let slack: SlackSettings;
let slackChannel: string;
if (real) {
  slackChannel = process.env.SLACK_DEPLOY_CHANNEL ?? "";
  if (slackChannel === "") {
    console.error(
      "Set SLACK_DEPLOY_CHANNEL to the id of the conversation the questions go to (C0123ABCD, at the bottom of the channel's details), and invite the app there.",
    );
    process.exit(1);
  }
  slack = {};
} else {
  local = await new LocalSlack().start(Number(process.env.LOCAL_SLACK_PORT ?? "0"));
  slack = { botToken: local.botToken, signingSecret: local.signingSecret, apiUrl: local.apiUrl, env: {} };
  slackChannel = "C0DEPLOYS";
}

let gate: Awaited<ReturnType<typeof startDeployGate>>;
try {
  gate = await startDeployGate({ sqlitePath, port, host, slack, slackChannel });
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await local?.stop();
  process.exit(1);
}
local?.deliverTo(`${gate.url}/slack`);

console.log(`AGBoss deploy gate listening on ${gate.url}`);
console.log(`  store     ${sqlitePath}`);
console.log(
  `  Slack     ${real ? `the real one, asking in ${slackChannel}` : `a local stand-in at ${local?.url}`}`,
);
console.log(`  POST ${gate.url}/deploys          {"service","version","environment","requestedBy"}`);
console.log(`  POST ${gate.url}/deploys/cancel   {"service","version","environment"}`);
console.log(`  GET  ${gate.url}/deploys`);
console.log(`  POST ${gate.url}/slack            Slack's Interactivity and Events API Request URL`);
if (local !== undefined) {
  console.log(`  GET  ${local.url}/messages        the conversation, as people in Slack see it`);
  console.log(`  POST ${local.url}/press           {"button":"deploy"|"hold","user"}: press a button`);
  console.log(`  POST ${local.url}/reply           {"text","user"}: answer in the thread`);
}

function shutdown(signal: string): void {
  console.log(`${signal}: closing`);
  gate
    .close()
    .then(() => local?.stop())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
}
process.once("SIGINT", () => shutdown("SIGINT"));
process.once("SIGTERM", () => shutdown("SIGTERM"));
