import { rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type App, createApp } from "@agboss/core";
import { createAgbossHttp } from "@agboss/http";
import { createAgbossInbox, type InboxCaller } from "@agboss/inbox";
import { sqliteStore } from "@agboss/store-sqlite";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { OfficeWorkflowStart } from "../approvals/index.js";
import { ReturnsWorkflowStart } from "../questions/index.js";
import { ReleaseWorkflowStart } from "../quorum/index.js";
import { FlowPatternsApplication } from "./inbox-application.js";

/** The example's people: a sign-in link sets the cookie. A real application reads its own session. */
const PEOPLE: Readonly<Record<string, InboxCaller>> = {
  dana: { tenantId: "acme", ownerId: "dana", answeredBy: "dana" },
};

function authenticate(request: Request): InboxCaller | undefined {
  const who = /(?:^|;\s*)who=([^;]+)/.exec(request.headers.get("cookie") ?? "")?.[1];
  return who === undefined ? undefined : PEOPLE[who];
}

/** dana's three requests: two approvals at once, two questions, and a release three reviewers sign off. */
export async function askDana(app: App): Promise<void> {
  const dana = { ownerId: "dana", tenant: { tenantId: "acme" } };
  await app.execute(
    OfficeWorkflowStart,
    { text: "Refund order ord_1042 to the customer's card, and book my taxi to the client." },
    { ...dana, threadId: "desk:dana" },
  );
  await app.execute(
    ReturnsWorkflowStart,
    { text: "Order ord_2231 came back with a cracked lid." },
    { ...dana, threadId: "returns:ord_2231" },
  );
  await app.execute(ReleaseWorkflowStart, { text: "v2.4.0" }, { ...dana, threadId: "release:v2.4.0" });
}

/** A running server: the inbox at /inbox/, `@agboss/http` at /agboss. */
export interface InboxServer {
  readonly url: string;
  readonly app: App;
  close(): Promise<void>;
}

/**
 * Serves the application over the SQLite file at `path`: `fresh` empties it and asks dana's questions
 * first; without it the server joins the questions already in the file (a second instance).
 */
export async function serveInbox(args: { path: string; port: number; fresh: boolean }): Promise<InboxServer> {
  if (args.fresh) for (const suffix of ["", "-wal", "-shm"]) rmSync(`${args.path}${suffix}`, { force: true });
  const app = await createApp(FlowPatternsApplication, { store: sqliteStore({ path: args.path }) });
  if (args.fresh) await askDana(app);
  const server = new Hono();
  server.get("/", (c) => c.redirect("/inbox/"));
  server.get("/sign-in/:who", (c) => {
    const who = c.req.param("who");
    if (PEOPLE[who] === undefined) return c.text(`No one called ${who} works here.`, 404);
    c.header("set-cookie", `who=${who}; Path=/; HttpOnly; SameSite=Lax`);
    return c.redirect("/inbox/");
  });
  server.route("/agboss", createAgbossHttp(app, { authenticate }));
  server.route("/inbox", createAgbossInbox(app, { authenticate, title: "dana's inbox" }));
  const { http, port } = await new Promise<{ http: Server; port: number }>((resolve) => {
    const s = serve({ fetch: server.fetch, port: args.port, hostname: "127.0.0.1" }, (info: AddressInfo) =>
      resolve({ http: s as Server, port: info.port }),
    );
  });
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    async close() {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await app.close();
    },
  };
}
