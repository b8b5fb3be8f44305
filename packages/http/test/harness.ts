import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type App, createApp, type StoreFactory } from "@agboss/core";
import { POSTGRES_URL_ENV, PostgresStore, postgresStore } from "@agboss/store-postgres";
import { sqliteStore } from "@agboss/store-sqlite";
import { serve } from "@hono/node-server";
import { type AgbossHttpOptions, createAgbossHttp, type HttpCaller, HttpError } from "../src/index.js";
import type { SeenResponse } from "./contract.js";
import { DeskApplication } from "./fixtures/desk.js";

/** Every response `call` saw, by the server it came from: checked against the OpenAPI document. */
export const seen: (SeenResponse & { readonly base: string })[] = [];

/** The Postgres server the tests use: `AGBOSS_POSTGRES_URL`, else the local `test` database. */
export const POSTGRES_URL = process.env[POSTGRES_URL_ENV] || "postgres://postgres@127.0.0.1:5432/test";

export type StoreKind = "sqlite" | "postgres";
export const STORE_KINDS: readonly StoreKind[] = ["sqlite", "postgres"];

/** A store of its own for one group of tests: a SQLite file, or a fresh Postgres schema. */
export interface TestStore {
  /** A factory for each app; every app opens its own connection to the one store. */
  factory(): StoreFactory;
  dispose(): Promise<void>;
}

export async function openTestStore(kind: StoreKind): Promise<TestStore> {
  if (kind === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "agboss-http-"));
    const path = join(dir, "desk.sqlite");
    return {
      factory: () => sqliteStore({ path }),
      dispose: () => {
        rmSync(dir, { recursive: true, force: true });
        return Promise.resolve();
      },
    };
  }
  const schema = `agboss_http_${randomBytes(6).toString("hex")}`;
  const admin = await PostgresStore.open({ connectionString: POSTGRES_URL, schema }).catch(
    (error: unknown) => {
      throw new Error(
        `These tests need PostgreSQL at ${POSTGRES_URL} (set ${POSTGRES_URL_ENV} to another server): ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    },
  );
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

/**
 * The tests' authentication: `authorization: Bearer <tenant>:<kind>:<id>`, where kind is `owner`
 * (ownerId), `reviewer` (answeredBy), `both`, or `suspended` (403). No header: 401.
 */
export function bearerCaller(request: Request): HttpCaller | undefined {
  const header = request.headers.get("authorization");
  const match = header === null ? null : /^Bearer ([^:]+):([^:]+):(.+)$/.exec(header);
  if (match === null) return undefined;
  const [, tenantId = "", kind, id] = match;
  if (kind === "owner") return { tenantId, ownerId: id };
  if (kind === "reviewer") return { tenantId, answeredBy: id };
  if (kind === "both") return { tenantId, ownerId: id, answeredBy: id };
  if (kind === "suspended") throw HttpError.forbidden(`${id} is suspended.`);
  return undefined;
}

/** One instance: an app on the store, served on a loopback port by @hono/node-server. */
export interface Instance {
  readonly url: string;
  readonly app: App;
  close(): Promise<void>;
}

export async function startInstance(
  store: TestStore,
  options: Partial<AgbossHttpOptions> = {},
): Promise<Instance> {
  const app = await createApp(DeskApplication, { store: store.factory() });
  const http = createAgbossHttp(app, { authenticate: bearerCaller, ...options });
  const { server, port } = await new Promise<{ server: Server; port: number }>((resolve) => {
    const s = serve({ fetch: http.fetch, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) =>
      resolve({ server: s as Server, port: info.port }),
    );
  });
  return {
    url: `http://127.0.0.1:${port}`,
    app,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await app.close();
    },
  };
}

/** A JSON request with a caller. */
export async function call(
  base: string,
  path: string,
  init: { method?: string; body?: unknown; as?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.as !== undefined) headers.authorization = `Bearer ${init.as}`;
  if (init.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    ...(init.body === undefined
      ? {}
      : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }),
  });
  const text = await res.text();
  const body = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
  seen.push({
    base,
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    path,
    status: res.status,
    contentType: res.headers.get("content-type") ?? "",
    body,
  });
  return { status: res.status, headers: res.headers, body };
}
