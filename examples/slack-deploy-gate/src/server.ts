import { mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
import {
  createSlackWebhook,
  SlackAsker,
  type SlackSettings,
  type SlackWebhook,
  slackRequestListener,
} from "@agboss/channel-slack";
import {
  type App,
  createApp,
  Dto,
  DtoValidationError,
  ExecutionStatus,
  type Logger,
  parseDto,
  ThreadBusyError,
} from "@agboss/core";
import { sqliteStore } from "@agboss/store-sqlite";
import { z } from "zod";
import {
  DEPLOYMENT_FIELDS,
  Deployer,
  DeployGateApplication,
  DeployGateSettings,
  DeploymentDto,
  DeployWorkflowStart,
  requestText,
  threadOf,
} from "./deploy-gate.js";
import { ScriptedDeployModelProvider } from "./models.js";

/** What POST /deploys takes: the deployment, and who asks for it. */
export class DeployRequestDto extends Dto({
  ...DEPLOYMENT_FIELDS,
  requestedBy: z.string().min(1),
}) {}

/** How to start the deploy gate. */
export interface DeployGateOptions {
  /** The SQLite file every instance shares. */
  readonly sqlitePath: string;
  /** Default 3000; 0 picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** How to reach Slack; what is left out is read from SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL. */
  readonly slack: SlackSettings;
  /** The Slack conversation's id the questions go to. */
  readonly slackChannel: string;
  readonly logger?: Logger;
}

/** A running deploy gate. */
export interface DeployGate {
  readonly url: string;
  readonly app: App;
  readonly webhook: SlackWebhook;
  /** Stops taking requests, lets the work after Slack's answers finish (message updates, deployments), then closes the app. */
  close(): Promise<void>;
}

interface Reply {
  readonly status: number;
  readonly body: unknown;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let raw = "";
  for await (const chunk of req) {
    raw += String(chunk);
    if (raw.length > 16 * 1024) throw new SyntaxError("the body is too large");
  }
  return JSON.parse(raw === "" ? "{}" : raw) as unknown;
}

async function requestDeploy(app: App, body: unknown): Promise<Reply> {
  const request = parseDto(DeployRequestDto, body, "the deployment request");
  const { requestedBy, ...deployment } = request;
  const result = await app.execute(
    DeployWorkflowStart,
    { text: requestText(deployment) },
    { threadId: threadOf(deployment), ownerId: requestedBy },
  );
  if (result.status === ExecutionStatus.Paused) {
    return { status: 202, body: { state: "awaiting_approval", threadId: result.threadId } };
  }
  return { status: 200, body: { state: result.status, threadId: result.threadId, output: result.output } };
}

async function cancelDeploy(app: App, body: unknown): Promise<Reply> {
  const deployment = parseDto(DeploymentDto, body, "the deployment to cancel");
  await app.cancel(threadOf(deployment));
  return { status: 200, body: { state: "cancelled", threadId: threadOf(deployment) } };
}

function send(res: ServerResponse, reply: Reply): void {
  res.writeHead(reply.status, { "content-type": "application/json" }).end(`${JSON.stringify(reply.body)}\n`);
}

/**
 * Creates the app once, then serves the deploy requests and Slack's webhook with it:
 * `POST /deploys`, `POST /deploys/cancel`, `GET /deploys` and `POST /slack`.
 */
export async function startDeployGate(options: DeployGateOptions): Promise<DeployGate> {
  mkdirSync(dirname(options.sqlitePath), { recursive: true });
  const app = await createApp(DeployGateApplication, {
    store: sqliteStore({ path: options.sqlitePath }),
    providers: [
      SlackAsker.with(options.slack),
      DeployGateSettings.in(options.slackChannel),
      ScriptedDeployModelProvider,
    ],
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  let webhook: SlackWebhook;
  try {
    webhook = createSlackWebhook(app);
  } catch (error) {
    await app.close();
    throw error;
  }
  const onSlack = slackRequestListener(webhook);

  const server: Server = createServer((req, res) => {
    const route = `${req.method ?? "GET"} ${new URL(req.url ?? "/", "http://localhost").pathname}`;
    if (route === "POST /slack") return onSlack(req, res);
    const handlers: Record<string, () => Promise<Reply>> = {
      "POST /deploys": async () => requestDeploy(app, await readJson(req)),
      "POST /deploys/cancel": async () => cancelDeploy(app, await readJson(req)),
      "GET /deploys": async () => ({ status: 200, body: { deployments: app.get(Deployer).list() } }),
    };
    const handler = handlers[route];
    if (handler === undefined) return send(res, { status: 404, body: { error: "not found" } });
    handler().then(
      (reply) => send(res, reply),
      (error: unknown) => {
        if (error instanceof DtoValidationError)
          return send(res, { status: 400, body: { error: error.code, issues: error.issues } });
        if (error instanceof SyntaxError) return send(res, { status: 400, body: { error: error.message } });
        if (error instanceof ThreadBusyError) {
          return send(res, {
            status: 409,
            body: { error: error.code, message: "This deployment already waits for approval." },
          });
        }
        console.error(`${route} failed:`, error);
        send(res, { status: 500, body: { error: "internal error" } });
      },
    );
  });

  let address: AddressInfo;
  try {
    address = await new Promise<AddressInfo>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 3000, options.host ?? "127.0.0.1", () =>
        resolve(server.address() as AddressInfo),
      );
    });
  } catch (error) {
    await app.close();
    throw error;
  }

  let closing: Promise<void> | undefined;
  return {
    url: `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`,
    app,
    webhook,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      })
        .then(() => webhook.idle())
        .then(() => app.close());
      return closing;
    },
  };
}
