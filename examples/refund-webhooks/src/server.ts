import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type App, createApp, type Logger } from "@agboss/core";
import { RefundDeskApplication } from "./desk.js";
import {
  type HttpReply,
  handleAnswer,
  handleApproval,
  handleCancel,
  handleOutbox,
  handleRefundRequest,
  handleRefunds,
} from "./handlers.js";
import { type ModelChoice, modelProvidersFor } from "./models.js";
import { describeStore, type StoreChoice, storeFactoryFor } from "./store.js";

/** How to start the desk's server. */
export interface RefundServerOptions {
  /**
   * The store every instance of the desk shares: a SQLite file, or a schema of a Postgres database
   * (`storeChoiceFromEnv` reads it from the environment).
   */
  readonly store: StoreChoice;
  /** Default 3000; 0 picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Where the model choice is read (`AGBOSS_OPENAI_API_KEY`, …). Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
}

/** A running server and the one app behind it. */
export interface RefundServer {
  readonly url: string;
  readonly app: App;
  readonly models: ModelChoice["kind"];
  /** The store, in one line without credentials (`describeStore`). */
  readonly store: string;
  /** Stops taking requests, then closes the app (and its store). */
  close(): Promise<void>;
}

/** The biggest body the webhooks accept. */
const MAX_BODY_BYTES = 64 * 1024;

class BadRequest extends Error {}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let raw = "";
  for await (const chunk of req) {
    raw += String(chunk);
    if (raw.length > MAX_BODY_BYTES) throw new BadRequest("The body is too large.");
  }
  // A real webhook would check the sender's signature on `raw` here.
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new BadRequest("The body is not JSON.");
  }
}

type Route = (app: App, req: IncomingMessage) => Promise<HttpReply> | HttpReply;

const routes: Record<string, Route> = {
  "POST /webhooks/refund-request": async (app, req) => handleRefundRequest(app, await readJson(req)),
  "POST /webhooks/approval": async (app, req) => handleApproval(app, await readJson(req)),
  "POST /webhooks/answer": async (app, req) => handleAnswer(app, await readJson(req)),
  "POST /webhooks/cancel": async (app, req) => handleCancel(app, await readJson(req)),
  "GET /outbox": (app) => handleOutbox(app),
  "GET /refunds": (app) => handleRefunds(app),
};

function send(res: ServerResponse, reply: HttpReply): void {
  res.writeHead(reply.status, { "content-type": "application/json" }).end(`${JSON.stringify(reply.body)}\n`);
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Creates the app once (store, providers, recovery sweep), then serves the webhooks with it. Every
 * request shares that app; nothing an answer needs is kept in this process.
 */
export async function startRefundServer(options: RefundServerOptions): Promise<RefundServer> {
  const env = options.env ?? process.env;
  const models = modelProvidersFor(env);
  const app = await createApp(RefundDeskApplication, {
    store: storeFactoryFor(options.store),
    providers: [models.provider],
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const route = routes[`${req.method ?? "GET"} ${path}`];
    if (route === undefined) {
      const known = Object.keys(routes).some((key) => key.endsWith(` ${path}`));
      send(
        res,
        known
          ? { status: 405, body: { error: "method not allowed" } }
          : { status: 404, body: { error: "not found" } },
      );
      return;
    }
    Promise.resolve()
      .then(() => route(app, req))
      .then(
        (reply) => send(res, reply),
        (error: unknown) => {
          if (error instanceof BadRequest) {
            send(res, { status: 400, body: { error: error.message } });
            return;
          }
          console.error(`${req.method} ${path} failed:`, error);
          send(res, { status: 500, body: { error: "internal error" } });
        },
      );
  });

  let address: AddressInfo;
  try {
    address = await listen(server, options.port ?? 3000, options.host ?? "127.0.0.1");
  } catch (error) {
    await app.close();
    throw error;
  }
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    app,
    models: models.kind,
    store: describeStore(options.store),
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }).then(() => app.close());
      return closing;
    },
  };
}
