import { request as httpRequest } from "node:http";
import { type App, createApp } from "@agboss/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DeskApplication, Outbox } from "./fixtures/desk.js";
import { bearerCaller, openTestStore, type TestStore } from "./harness.js";
import { serveWithExpress } from "./mounts/express-mount.js";
import { serveWithFastify } from "./mounts/fastify-mount.js";
import { serveWithHono } from "./mounts/hono-mount.js";
import { nextRouteHandlers } from "./mounts/next-route.js";

type Fetcher = (path: string, init?: RequestInit) => Promise<Response>;

const MOUNTS: Record<
  string,
  (app: App) => Promise<{ fetcher: Fetcher; base?: string; close(): Promise<void> }>
> = {
  hono: async (app) => {
    const s = await serveWithHono(app, bearerCaller);
    return { fetcher: (path, init) => fetch(`${s.url}${path}`, init), base: s.url, close: s.close };
  },
  express: async (app) => {
    const s = await serveWithExpress(app, bearerCaller);
    return { fetcher: (path, init) => fetch(`${s.url}${path}`, init), base: s.url, close: s.close };
  },
  fastify: async (app) => {
    const s = await serveWithFastify(app, bearerCaller);
    return { fetcher: (path, init) => fetch(`${s.url}${path}`, init), base: s.url, close: s.close };
  },
  "next.js route handler": (app) => {
    const { GET, POST } = nextRouteHandlers(Promise.resolve(app), bearerCaller);
    const fetcher: Fetcher = (path, init) => {
      const request = new Request(`http://localhost:3000/agboss${path}`, init);
      return request.method === "GET" ? GET(request) : POST(request);
    };
    return Promise.resolve({ fetcher, close: () => Promise.resolve() });
  },
};

/** Two writes with the split in the middle of a character. */
function postSplit(url: string, body: string, authorization: string): Promise<number> {
  const bytes = Buffer.from(body, "utf8");
  const at = bytes.indexOf(Buffer.from("ü", "utf8")) + 1;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: "POST", headers: { "content-type": "application/json", authorization } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.write(bytes.subarray(0, at));
    setTimeout(() => req.end(bytes.subarray(at)), 60);
  });
}

describe.each(Object.keys(MOUNTS))("mounted in %s", (name) => {
  let store: TestStore;
  let app: App;
  let mount: Awaited<ReturnType<(typeof MOUNTS)[string]>>;
  beforeAll(async () => {
    store = await openTestStore("sqlite");
    app = await createApp(DeskApplication, { store: store.factory() });
    mount = await (MOUNTS[name] as (typeof MOUNTS)[string])(app);
  });
  afterAll(async () => {
    await mount?.close();
    await app?.close();
    await store?.dispose();
  });

  const json = (body: unknown, as: string): RequestInit => ({
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${as}` },
    body: JSON.stringify(body),
  });

  test("starts, answers with a reason in UTF-8, reads the record and serves the OpenAPI document", async () => {
    const started = await mount.fetcher(
      "/starts/desk-workflow-start",
      json({ input: { text: "refund o1 100" } }, "acme:owner:dana"),
    );
    expect(started.status).toBe(202);
    const { executionId } = (await started.json()) as { executionId: string };
    const pauseId = app.get(Outbox).posted.at(-1)?.pauseId ?? "";
    const reason = "Zurückerstattung abgelehnt";
    const body = JSON.stringify({ decision: { approved: false, reason } });
    if (mount.base === undefined) {
      const answered = await mount.fetcher(`/pauses/${pauseId}/answer`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer acme:reviewer:m" },
        body,
      });
      expect(answered.status).toBe(200);
    } else {
      expect(await postSplit(`${mount.base}/pauses/${pauseId}/answer`, body, "Bearer acme:reviewer:m")).toBe(
        200,
      );
    }
    const record = await mount.fetcher(`/executions/${executionId}`, {
      headers: { authorization: "Bearer acme:owner:dana" },
    });
    expect(record.status).toBe(200);
    expect(await record.json()).toMatchObject({
      status: "completed",
      pauses: [{ decision: { approved: false, reason } }],
    });

    // A POST with no body (a cancel), and a GET with a query (the inbox).
    const waiting = await mount.fetcher(
      "/starts/desk-workflow-start",
      json({ input: { text: "refund o2 200" }, threadId: "order:o2" }, "acme:owner:dana"),
    );
    expect(waiting.status).toBe(202);
    const inbox = await mount.fetcher("/pauses?threadId=order%3Ao2", {
      headers: { authorization: "Bearer acme:owner:dana" },
    });
    expect(((await inbox.json()) as { pauses: unknown[] }).pauses).toHaveLength(1);
    const cancelled = await mount.fetcher("/threads/order%3Ao2/cancel", {
      method: "POST",
      headers: { authorization: "Bearer acme:owner:dana" },
    });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toMatchObject({ threadId: "order:o2", status: "cancelled" });

    const missing = await mount.fetcher("/pauses/nope/answer", json({ reply: "approve" }, "acme:reviewer:m"));
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toBe("application/problem+json");
    const tooBig = await mount.fetcher(
      "/starts/desk-workflow-start",
      json({ input: { text: "x".repeat(200_000) } }, "acme:owner:dana"),
    );
    expect(tooBig.status).toBe(413);
    const doc = await mount.fetcher("/openapi.json");
    expect(doc.status).toBe(200);
    expect(await doc.json()).toMatchObject({ openapi: "3.1.0" });
    if (name === "express" || name === "fastify") {
      // The server's own routes keep their body parser.
      const res = await fetch(`${(mount.base ?? "").replace(/\/agboss$/, "")}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sku: "lamp" }),
      });
      expect(await res.json()).toEqual({ received: { sku: "lamp" } });
    }
  });
});
