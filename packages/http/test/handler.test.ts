import { type App, createApp, type LogEntry, memoryStore } from "@agboss/core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createAgbossHttp, type HttpCaller, problemOf } from "../src/index.js";
import { DeskApplication } from "./fixtures/desk.js";

const logged: LogEntry[] = [];
let app: App;

beforeAll(async () => {
  app = await createApp(DeskApplication, {
    store: memoryStore(),
    logger: { log: (entry) => logged.push(entry) },
  });
});
afterAll(async () => {
  await app?.close();
});

const post = (body: string, headers: Record<string, string> = {}) =>
  new Request("http://desk.test/starts/desk-workflow-start", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });

describe("the handler in process", () => {
  test("authentication comes before the body: an unknown caller with a huge body is 401, not 413", async () => {
    const http = createAgbossHttp(app, { authenticate: () => undefined });
    const res = await http.fetch(post(JSON.stringify({ input: { text: "x".repeat(1_000_000) } })));
    expect(res.status).toBe(401);
  });

  test("a hook that returns no valid caller is a 500 that says what to return; a hook that throws is a logged 500", async () => {
    const invalid = createAgbossHttp(app, {
      authenticate: () => ({ tenantId: "" }) as unknown as HttpCaller,
    });
    const res = await invalid.fetch(post('{"input":{"text":"x"}}'));
    expect(res.status).toBe(500);
    const problem = (await res.json()) as Record<string, string>;
    expect(problem.code).toBe("http.caller-invalid");
    expect(problem.detail).toContain("tenantId must be a non-empty text");
    expect(problem.detail).toContain("give ownerId, answeredBy or both");

    logged.length = 0;
    const throwing = createAgbossHttp(app, {
      authenticate: () => {
        throw new Error("session store down: secret-connection-string");
      },
    });
    const failed = await throwing.fetch(post('{"input":{"text":"x"}}'));
    expect(failed.status).toBe(500);
    const body = await failed.text();
    expect(JSON.parse(body)).toMatchObject({ code: "http.internal", status: 500 });
    expect(body).not.toContain("secret-connection-string");
    expect(logged).toMatchObject([
      {
        level: "error",
        event: "http.request-failed",
        message: expect.stringContaining("session store down"),
      },
    ]);
  });

  test("problemOf keeps an AGBoss error's code and message, and hides anything else", () => {
    expect(problemOf(new TypeError("x is undefined"))).toEqual({
      type: expect.stringContaining("http.internal"),
      title: "Internal error",
      status: 500,
      detail: "The server failed to handle the request; it was logged.",
      code: "http.internal",
    });
    expect(
      problemOf(new Error("boom"), { problemType: (code) => `https://example.com/problems/${code}` }).type,
    ).toBe("https://example.com/problems/http.internal");
  });

  test("a basePath prefixes every route; the others are 404 problems when the handler is the server", async () => {
    const http = createAgbossHttp(app, {
      authenticate: () => ({ tenantId: "acme", ownerId: "dana" }),
      basePath: "/agboss",
    });
    const ok = await http.fetch(post('{"input":{"text":"hello"}}'));
    expect(ok.status).toBe(404);
    expect(((await ok.json()) as { code: string }).code).toBe("http.route-unknown");
    const prefixed = await http.fetch(
      new Request("http://desk.test/agboss/starts/desk-workflow-start", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"input":{"text":"hello"}}',
      }),
    );
    expect(prefixed.status).toBe(200);
    const options = await http.fetch(new Request("http://desk.test/agboss/pauses", { method: "DELETE" }));
    expect(options.status).toBe(405);
    expect(options.headers.get("allow")).toBe("GET");
  });
});
