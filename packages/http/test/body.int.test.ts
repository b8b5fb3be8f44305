import { request as httpRequest } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEFAULT_MAX_BODY_BYTES } from "../src/index.js";
import { Outbox } from "./fixtures/desk.js";
import { call, type Instance, openTestStore, startInstance, type TestStore } from "./harness.js";

const DANA = "acme:owner:dana";
const MANAGER = "acme:reviewer:manager-17";

/** Posts `parts` as separate writes with a pause between them, so they reach the server as separate chunks. */
function postInParts(
  url: string,
  parts: readonly Buffer[],
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }),
      );
    });
    req.on("error", reject);
    void (async () => {
      for (const part of parts) {
        req.write(part);
        await sleep(60);
      }
      req.end();
    })();
  });
}

describe("request bodies", () => {
  let store: TestStore;
  let server: Instance;
  beforeAll(async () => {
    store = await openTestStore("sqlite");
    server = await startInstance(store);
  });
  afterAll(async () => {
    await server?.close();
    await store?.dispose();
  });

  test("a UTF-8 character split across two network chunks is stored intact", async () => {
    const started = await call(server.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: { input: { text: "refund o1 100" } },
    });
    const pauseId = server.app.get(Outbox).posted.at(-1)?.pauseId ?? "";
    const reason = "Zurückerstattung abgelehnt";
    const bytes = Buffer.from(JSON.stringify({ decision: { approved: false, reason } }), "utf8");
    const umlaut = bytes.indexOf(Buffer.from("ü", "utf8"));
    // The first chunk ends between the two bytes of "ü".
    const parts = [bytes.subarray(0, umlaut + 1), bytes.subarray(umlaut + 1)];
    const answered = await postInParts(`${server.url}/pauses/${pauseId}/answer`, parts, {
      "content-type": "application/json",
      authorization: `Bearer ${MANAGER}`,
    });
    expect(answered.status).toBe(200);
    const record = await call(server.url, `/executions/${String(started.body.executionId)}`, { as: DANA });
    expect(record.body.pauses).toMatchObject([{ decision: { approved: false, reason } }]);
  });

  test("a body over the limit is 413, whether its length is declared or streamed", async () => {
    const big = JSON.stringify({ input: { text: "x".repeat(10 * 1024 * 1024) } });
    const declared = await call(server.url, "/starts/desk-workflow-start", { as: DANA, body: big });
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ code: "http.body-too-large", maxBytes: DEFAULT_MAX_BODY_BYTES });

    // Chunked, with no content-length: counted as it arrives.
    const chunk = Buffer.alloc(16 * 1024, 0x61);
    const streamed = await postInParts(
      `${server.url}/starts/desk-workflow-start`,
      [Buffer.from('{"input":{"text":"'), ...Array.from({ length: 6 }, () => chunk), Buffer.from('"}}')],
      { "content-type": "application/json", authorization: `Bearer ${DANA}`, "transfer-encoding": "chunked" },
    );
    expect(streamed.status).toBe(413);
  });

  test("the limit counts bytes, not characters", async () => {
    // 30,000 "ü" are 30,000 characters but 60,000 bytes: under a 40,000-byte limit by characters, over it by bytes.
    const small = await startInstance(store, { maxBodyBytes: 40_000 });
    try {
      const body = JSON.stringify({ input: { text: "ü".repeat(30_000) } });
      expect(body.length).toBeLessThan(40_000);
      const res = await call(small.url, "/starts/desk-workflow-start", { as: DANA, body });
      expect(res.status).toBe(413);
    } finally {
      await small.close();
    }
  });

  test("bodies that are not UTF-8 JSON are 400, other media types 415; nothing is started", async () => {
    const latin1 = await postInParts(
      `${server.url}/starts/desk-workflow-start`,
      [Buffer.from('{"input":{"text":"Zur'), Buffer.from([0xfc]), Buffer.from('ckerstattung"}}')],
      { "content-type": "application/json", authorization: `Bearer ${DANA}` },
    );
    expect(latin1.status).toBe(400);
    expect(latin1.body).toMatchObject({
      code: "http.body-unreadable",
      detail: expect.stringContaining("UTF-8"),
    });
    const notJson = await call(server.url, "/starts/desk-workflow-start", { as: DANA, body: "{input:" });
    expect(notJson.status).toBe(400);
    expect(notJson.body.code).toBe("http.body-unreadable");
    const empty = await call(server.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: "",
      headers: { "content-type": "application/json" },
    });
    expect(empty.status).toBe(400);
    const text = await call(server.url, "/starts/desk-workflow-start", {
      as: DANA,
      body: "hello",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);
    expect(text.body.code).toBe("http.unsupported-media-type");
    const inbox = await call(server.url, "/pauses?status=pending,resolved,taken,cancelled", { as: DANA });
    expect((inbox.body.pauses as unknown[]).length).toBe(1);
  });
});
