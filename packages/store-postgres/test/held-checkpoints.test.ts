import { CHECKPOINT_HISTORY_CONFIG_KEY, FENCE_CONFIG_KEY, LeaseLostError } from "@agboss/core/store";
import pg from "pg";
import { afterAll, describe, expect, test } from "vitest";
import { heldCheckpointCases } from "../../store-kysely/test/held-checkpoint-cases.js";
import { PostgresStore } from "../src/index.js";
import { dropSchema, TEST_URL, uniqueSchema } from "./postgres-server.js";

describe("a pass's held checkpoints on Postgres", () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });
  heldCheckpointCases(
    async () => {
      const schema = uniqueSchema();
      schemas.push(schema);
      const open = () => PostgresStore.open({ connectionString: TEST_URL, schema });
      return { store: await open(), reopen: open };
    },
    (store) => store.close(),
  );
});

describe("a lease confirmed before a tool, on Postgres", () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });

  test("answers false while the pass's checkpoint write is queued behind a lock; the renewal that follows waits with it and fails when a takeover loses it", async () => {
    const schema = uniqueSchema();
    schemas.push(schema);
    const store = await PostgresStore.open({ connectionString: TEST_URL, schema });
    const other = new pg.Client({ connectionString: TEST_URL });
    await other.connect();
    try {
      const fence = (await store.leases.acquire({ key: "tree", holder: "a", now: 1_000, ttlMs: 60_000 }))!;
      // Another session holds the lease row, as a takeover in flight would: the pass's fenced write
      // of its held checkpoint, sent by the hold's timer, waits on it in the pass's queue.
      await other.query("begin");
      await other.query(
        `select 1 from ${pg.escapeIdentifier(schema)}.agboss_leases where key = 'tree' for update`,
      );
      const config = {
        configurable: {
          thread_id: "tree",
          checkpoint_ns: "",
          [FENCE_CONFIG_KEY]: { key: fence.key, epoch: fence.epoch },
          [CHECKPOINT_HISTORY_CONFIG_KEY]: "latest",
        },
      };
      const checkpoint = {
        v: 4,
        id: "00000000-0000-6000-8000-000000000001",
        ts: new Date(1).toISOString(),
        channel_values: { messages: ["m1"] },
        channel_versions: { messages: 1 },
        versions_seen: {},
      };
      await store.checkpointer.put(
        config,
        checkpoint,
        { source: "loop", step: 1, parents: {} },
        { messages: 1 },
      );
      await new Promise((resolve) => setTimeout(resolve, 30));

      // Not a yes while the pass's write waits: the runtime renews instead, which waits with it.
      expect(await store.leases.confirm(fence, 2_000)).toBe(false);
      let answered = false;
      const renewing = store.leases.renew({ fence, now: 2_000, ttlMs: 60_000 }).finally(() => {
        answered = true;
      });
      renewing.catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(answered).toBe(false);
      await other.query(
        `update ${pg.escapeIdentifier(schema)}.agboss_leases set epoch = epoch + 1, holder = 'b' where key = 'tree'`,
      );
      await other.query("commit");
      await expect(renewing).rejects.toBeInstanceOf(LeaseLostError);
      const { rows } = await other.query(
        `select count(*)::int as n from ${pg.escapeIdentifier(schema)}.agboss_checkpoints`,
      );
      expect(rows[0].n).toBe(0);
    } finally {
      await other.end();
      await store.close();
    }
  });
});
