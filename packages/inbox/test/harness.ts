import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type App, createApp, type StoreFactory } from "@agboss/core";
import { createAgbossHttp } from "@agboss/http";
import { POSTGRES_URL_ENV, PostgresStore, postgresStore } from "@agboss/store-postgres";
import { sqliteStore } from "@agboss/store-sqlite";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { type AgbossInboxOptions, createAgbossInbox, type InboxCaller } from "../src/index.js";
import { DeskStart, OpsDeskApplication, ReleaseStart } from "./fixtures/ops-desk.js";

export const POSTGRES_URL = process.env[POSTGRES_URL_ENV] || "postgres://postgres@127.0.0.1:5432/test";

/** The people of the tests, by the `who` cookie. */
export const PEOPLE: Readonly<Record<string, InboxCaller>> = {
  dana: { tenantId: "acme", ownerId: "dana", answeredBy: "dana" },
  mia: { tenantId: "acme", answeredBy: "mia", roles: ["refund-approval-channel"] },
  globex: { tenantId: "globex", ownerId: "dana", answeredBy: "dana", roles: ["refund-approval-channel"] },
  typo: { tenantId: "acme", answeredBy: "mia", roles: ["refund-aproval-channel"] },
};

/** The tests' sign-in: the `who` cookie names one of {@link PEOPLE}; none is a 401. */
export function cookieCaller(request: Request): InboxCaller | undefined {
  const cookie = request.headers.get("cookie") ?? "";
  const who = /(?:^|;\s*)who=([^;]+)/.exec(cookie)?.[1];
  return who === undefined ? undefined : PEOPLE[who];
}

export interface TestStore {
  factory(): StoreFactory;
  dispose(): Promise<void>;
}

export async function openTestStore(kind: "sqlite" | "postgres"): Promise<TestStore> {
  if (kind === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "agboss-inbox-"));
    const path = join(dir, "ops.sqlite");
    return {
      factory: () => sqliteStore({ path }),
      dispose: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const schema = `agboss_inbox_${randomBytes(6).toString("hex")}`;
  const admin = await PostgresStore.open({ connectionString: POSTGRES_URL, schema });
  return {
    factory: () => postgresStore({ connectionString: POSTGRES_URL, schema }),
    async dispose() {
      try {
        await admin.db.schema.dropSchema(schema).ifExists().cascade().execute();
      } finally {
        await admin.close();
      }
    },
  };
}

/** One instance: an app on the store, with the HTTP routes at /agboss and the inbox at /inbox. */
export interface Instance {
  readonly url: string;
  readonly app: App;
  close(): Promise<void>;
}

export async function startInstance(
  store: TestStore,
  options: Partial<AgbossInboxOptions> = {},
): Promise<Instance> {
  const app = await createApp(OpsDeskApplication, { store: store.factory() });
  const server = new Hono();
  server.route("/agboss", createAgbossHttp(app, { authenticate: cookieCaller }));
  server.route(
    "/inbox",
    createAgbossInbox(app, { authenticate: cookieCaller, pollIntervalMs: 100, ...options }),
  );
  const { http, port } = await new Promise<{ http: Server; port: number }>((resolve) => {
    const s = serve({ fetch: server.fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) =>
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

/** Starts a desk request (`refund ord_1 2500`, `deploy api 1.4.2`, `assess ord_7`) on dana's thread. */
export function ask(app: App, text: string, threadId: string) {
  return app.execute(DeskStart, { text }, { threadId, ownerId: "dana", tenant: { tenantId: "acme" } });
}

/** Starts a release whose three reviewers each ask dana to sign their part off; two decide it. */
export function release(app: App, name: string, threadId: string) {
  return app.execute(
    ReleaseStart,
    { text: name },
    { threadId, ownerId: "dana", tenant: { tenantId: "acme" } },
  );
}

/** A request to the inbox as one of {@link PEOPLE}. */
export async function call(
  base: string,
  path: string,
  init: { as?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.as !== undefined) headers.cookie = `who=${init.as}`;
  if (init.body !== undefined) {
    headers["content-type"] ??= "application/json";
    headers["x-agboss-inbox"] ??= "1";
  }
  const res = await fetch(`${base}${path}`, {
    method: init.body === undefined ? "GET" : "POST",
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}
