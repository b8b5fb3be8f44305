import { PauseStatus } from "@agboss/core";
import { type AgbossDatabase, KyselyStore } from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { type CompiledQuery, Kysely, SqliteDialect } from "kysely";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SQLITE_CAPABILITIES } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

const COUNT = 100_000;

describe("pause lookups among 100,000 pending pauses", () => {
  const dir = tempDir();
  const database = new Database(dir.file("many.sqlite"));
  const queries: CompiledQuery[] = [];
  const db = new Kysely<AgbossDatabase>({
    dialect: new SqliteDialect({ database }),
    log: (event) => {
      if (event.level === "query") queries.push(event.query);
    },
  });
  const store = new KyselyStore({ db, capabilities: SQLITE_CAPABILITIES, name: "sqlite:many" });

  beforeAll(async () => {
    await store.migrate();
    const insert = database.prepare(
      `insert into agboss_pauses (tenant_id, pause_id, idempotency_key, thread_id, root_execution_id, execution_id,
        owner_id, status, is_sent, channel, answered_by, agent, ask, step, asked_at)
       values (?, ?, ?, ?, ?, ?, 'owner', 'pending', 0, 'approvals', 'thread-owner', 'agent', '{}', '{}', ?)`,
    );
    database.transaction(() => {
      for (let i = 0; i < COUNT; i += 1) {
        insert.run(
          `tenant-${i % 10}`,
          `pause-${i}`,
          `step-${i}`,
          `thread-${i}`,
          `root-${i % 5000}`,
          `root-${i}`,
          i,
        );
      }
    })();
  });
  afterAll(async () => {
    await store.close();
    await db.destroy();
    dir.dispose();
  });

  const scansPauses = (query: CompiledQuery) => {
    const plan = database.prepare(`explain query plan ${query.sql}`).all(...query.parameters) as {
      detail: string;
    }[];
    // A full scan, or an index that narrows only by tenant, would read every pause of the tenant.
    return plan.filter(
      (row) =>
        (/^SCAN agboss_pauses\b/.test(row.detail) && !/USING/.test(row.detail)) ||
        /agboss_pauses .*\(tenant_id=\?\)$/.test(row.detail),
    );
  };

  test("every lookup and status change uses an index, never a full scan", async () => {
    queries.length = 0;
    const found = await store.pauses.findByTenantIdAndPauseId("tenant-7", "pause-77777");
    expect(found?.idempotencyKey).toBe("step-77777");
    expect(await store.pauses.findByTenantIdAndIdempotencyKey("tenant-3", "step-12343")).toBeDefined();
    expect(await store.pauses.list({ tenantId: "tenant-1", rootExecutionId: "root-11" })).toHaveLength(
      COUNT / 5000,
    );
    expect(
      await store.pauses.resolve("tenant-7", "pause-77777", { decision: true as never }, 5),
    ).toBeDefined();
    expect(await store.pauses.take("tenant-7", "pause-77777", { at: 6 })).toBeDefined();
    expect(await store.pauses.deleteResolvedBefore(1)).toBe(0);
    expect((await store.pauses.findOrCreate({ ...found!, pauseId: "other" })).pauseId).toBe("pause-77777");

    const statements = queries.filter(
      (q) => /agboss_pauses/.test(q.sql) && !/^(begin|commit|rollback)/i.test(q.sql),
    );
    expect(statements.length).toBeGreaterThan(5);
    for (const query of statements) expect(scansPauses(query), query.sql).toEqual([]);
  });

  test("the recovery sweep's listResolvedBefore reads the resolved index in order, never sorting", async () => {
    for (let i = 0; i < 5; i += 1) {
      await store.pauses.resolve("tenant-3", `pause-${i * 1000 + 3}`, { decision: i as never }, 100 - i);
    }
    queries.length = 0;
    const found = await store.pauses.listResolvedBefore({ before: 99, limit: 3 });
    expect(found.map((p) => [p.resolvedAt, p.pauseId])).toEqual([
      [96, "pause-4003"],
      [97, "pause-3003"],
      [98, "pause-2003"],
    ]);
    const [query] = queries.filter((q) => /agboss_pauses/.test(q.sql));
    const plan = database.prepare(`explain query plan ${query!.sql}`).all(...query!.parameters) as {
      detail: string;
    }[];
    expect(plan.map((row) => row.detail)).toEqual([
      "SEARCH agboss_pauses USING INDEX agboss_pauses_resolved_idx (status=? AND resolved_at<?)",
    ]);
  });

  test("a tree's pending pauses (listed at the end of every pass) are read by the tree's own index, never the tenant's inbox", async () => {
    queries.length = 0;
    const waiting = await store.pauses.list({
      tenantId: "tenant-2",
      rootExecutionId: "root-12",
      statuses: [PauseStatus.Pending],
    });
    expect(waiting).toHaveLength(COUNT / 5000);
    const [query] = queries.filter((q) => /agboss_pauses/.test(q.sql));
    const plan = database.prepare(`explain query plan ${query!.sql}`).all(...query!.parameters) as {
      detail: string;
    }[];
    const search = plan.map((row) => row.detail).filter((detail) => /agboss_pauses/.test(detail));
    expect(search).toHaveLength(1);
    expect(search[0]).toMatch(
      /^SEARCH agboss_pauses USING INDEX \S+ \(tenant_id=\? AND root_execution_id=\?/,
    );
  });

  test("a lookup by pause id stays fast", async () => {
    const started = performance.now();
    for (let i = 0; i < 200; i += 1)
      await store.pauses.findByTenantIdAndPauseId(`tenant-${i % 10}`, `pause-${i * 7}`);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(
      (await store.pauses.list({ tenantId: "tenant-0", statuses: [PauseStatus.Pending], limit: 3 })).length,
    ).toBe(3);
  });
});
