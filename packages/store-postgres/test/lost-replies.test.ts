import { randomBytes } from "node:crypto";
import { ExecutionStatus } from "@agboss/core";
import { afterEach, describe, expect, test } from "vitest";
import { PostgresStore } from "../src/index.js";
import { dropSchema, proxyInFront, TEST_URL, uniqueSchema } from "./postgres-server.js";

// A reply lost on the way back: the server ran and committed a statement, then the connection broke
// before its answer reached the store. A TCP proxy between the store and the server stands in for the
// network: it forwards everything, and when told, cuts the connection at the first answer the server
// sends after a statement whose text matches.

interface Cut {
  /** Matched against what the store sends (a statement's text travels in its Parse message). */
  readonly statement: RegExp;
  /** Runs once the server has answered it, before the store's connection is cut. */
  readonly meanwhile: () => Promise<void>;
}

async function proxy(): Promise<{ url: string; cut: (cut: Cut) => void; close: () => Promise<void> }> {
  let armed: Cut | undefined;
  const { url, close } = await proxyInFront((client, upstream) => {
    let cutting: Cut | undefined;
    client.on("data", (chunk) => {
      if (armed?.statement.test(chunk.toString("latin1"))) {
        cutting = armed;
        armed = undefined;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (cutting === undefined) {
        client.write(chunk);
        return;
      }
      const cut = cutting;
      cutting = undefined;
      upstream.pause();
      void cut.meanwhile().finally(() => {
        client.destroy();
        upstream.destroy();
      });
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end);
    upstream.on("error", end);
    client.on("close", end);
    upstream.on("close", end);
  });
  return {
    url,
    cut: (cut) => {
      armed = cut;
    },
    close,
  };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("a reply lost after the statement committed", () => {
  test("a record saved with its lease let go, whose reply was lost while another holder took the lease: the save run again finds its record stored and returns", async () => {
    const schema = uniqueSchema();
    const network = await proxy();
    cleanups.push(() => network.close());
    const appName = `lost-reply-${randomBytes(6).toString("hex")}`;
    const store = await PostgresStore.open({ connectionString: network.url, schema, appName });
    cleanups.push(() => dropSchema(schema));
    cleanups.push(() => store.close());
    // Another instance, on a connection of its own.
    const other = await PostgresStore.open({ connectionString: TEST_URL, schema, appName: `${appName}-b` });
    cleanups.push(() => other.close());

    const now = Date.now();
    const lease = await store.leases.acquire({ key: "acme/t-1", holder: "a", now, ttlMs: 30_000 });
    if (lease === undefined) throw new Error("not granted");
    const saved = {
      tenantId: "acme",
      executionId: "e-1",
      rootExecutionId: "e-1",
      parentExecutionId: undefined,
      threadId: "t-1",
      workflowName: "w",
      status: ExecutionStatus.Completed,
      startedAt: now,
      updatedAt: now + 5,
      record: { status: "completed", output: { text: "done" } },
    };
    let taken: Awaited<ReturnType<typeof other.leases.acquire>>;
    network.cut({
      statement: /agboss_executions[\s\S]*agboss_leases|agboss_leases[\s\S]*agboss_executions/,
      // The save landed and let the lease go: another instance takes it before the store runs it again.
      meanwhile: async () => {
        taken = await other.leases.acquire({ key: "acme/t-1", holder: "b", now: now + 10, ttlMs: 30_000 });
      },
    });
    await store.executions.save(saved, lease, { release: true });
    expect(taken?.holder).toBe("b");
    const stored = await other.executions.findByTenantIdAndExecutionId("acme", "e-1");
    expect(stored).toMatchObject({ status: ExecutionStatus.Completed, updatedAt: now + 5 });
    expect(stored?.record).toEqual(saved.record);
  });
});
