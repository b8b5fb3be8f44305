import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type App, createApp, type Logger } from "@agboss/core";
import { createAgbossHttp } from "@agboss/http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { authenticateDemoCaller } from "./callers.js";
import { RefundDeskApplication } from "./desk.js";
import type { RefundRequestDto } from "./dtos.js";
import { type ModelChoice, modelProvidersFor } from "./models.js";
import { Outbox } from "./outbox.js";
import { CardPayments } from "./payments.js";
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

/** The thread a request about an order lives on: a second request for a waiting order is refused (409). */
export function threadOf(orderId: string): string {
  return `order:${orderId}`;
}

/**
 * The desk's routes: AGBoss's own (`@agboss/http`: start, answer, inbox, cancel, records, the OpenAPI
 * document), and two demo views of the stand-ins for outside systems.
 */
export function refundDeskRoutes(app: App): Hono {
  const server = new Hono();
  // The outbox stands in for a chat room: mark a question answered there once its answer is recorded.
  server.use("/pauses/:pauseId/answer", async (c, next) => {
    await next();
    if (c.res.status !== 200 && c.res.status !== 202) return;
    const outcome = (await c.res.clone().json()) as { outcome?: string };
    const caller = authenticateDemoCaller(c.req.raw);
    if (outcome.outcome === "answered" || outcome.outcome === "recorded") {
      app
        .get(Outbox)
        .settle(c.req.param("pauseId"), "answered", `answered by ${caller?.answeredBy ?? caller?.ownerId}`);
    }
  });
  server.route(
    "/",
    createAgbossHttp(app, {
      authenticate: authenticateDemoCaller,
      threadId: ({ input }) => threadOf((input as RefundRequestDto).orderId),
      openApi: { title: "Refund desk", version: "1.0.0" },
    }),
  );
  // Demo views: a real desk would never publish the outbox (its pauseIds are the right to answer).
  server.get("/outbox", (c) => c.json({ messages: app.get(Outbox).list() }));
  server.get("/refunds", (c) => c.json({ refunds: app.get(CardPayments).list() }));
  return server;
}

/**
 * Creates the app once (store, providers, recovery sweep), then serves the desk's routes with it. Every
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

  let server: Server;
  let address: AddressInfo;
  try {
    const routes = refundDeskRoutes(app);
    ({ server, address } = await new Promise<{ server: Server; address: AddressInfo }>((resolve, reject) => {
      const listening = serve(
        { fetch: routes.fetch, port: options.port ?? 3000, hostname: options.host ?? "127.0.0.1" },
        (info) => resolve({ server: listening as Server, address: info }),
      ) as Server;
      listening.once("error", reject);
    }));
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
