import { PauseStatus } from "@agboss/core";
import { type AgbossDatabase, KyselyStore } from "@agboss/store-kysely";
import { type CompiledQuery, Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { POSTGRES_CAPABILITIES } from "../src/index.js";
import { SchemaScopedPostgresDialect } from "../src/schema-introspector.js";
import { dropSchema, TEST_URL, uniqueSchema } from "./postgres-server.js";

const COUNT = 50_000;

// What the planner does with the pause queries of the pause, resume and sweep paths once a tenant has
// many waiting pauses: each must be answered through an index that bounds it, never a scan of the
// tenant's (or the table's) pauses. Checked with EXPLAIN on the real server after ANALYZE, so a planner
// or index change shows here.
describe("pause lookups among 50,000 pending pauses on Postgres", () => {
  const schema = uniqueSchema();
  const pool = new pg.Pool({ connectionString: TEST_URL, max: 2 });
  const queries: CompiledQuery[] = [];
  const db = new Kysely<AgbossDatabase>({
    dialect: new SchemaScopedPostgresDialect({ pool }, schema),
    log: (event) => {
      if (event.level === "query") queries.push(event.query);
    },
  });
  const store = new KyselyStore({ db, schema, capabilities: POSTGRES_CAPABILITIES, name: "postgres:many" });

  beforeAll(async () => {
    await store.migrate();
    await pool.query(
      `insert into "${schema}".agboss_pauses (tenant_id, pause_id, idempotency_key, thread_id, root_execution_id,
         execution_id, owner_id, status, is_sent, channel, answered_by, agent, ask, step, asked_at)
       select 'tenant-' || (i % 10), 'pause-' || i, 'step-' || i, 'thread-' || i, 'root-' || (i % 5000),
              'root-' || i, 'owner', 'pending', 0, 'approvals', 'thread-owner', 'agent', '{}', '{}', i
       from generate_series(0, ${COUNT - 1}) as i`,
    );
    await pool.query(`analyze "${schema}".agboss_pauses`);
  }, 120_000);
  afterAll(async () => {
    await db.destroy();
    await dropSchema(schema);
  });

  async function planOf(query: CompiledQuery): Promise<string> {
    const client = await pool.connect();
    try {
      const { rows } = await client.query(`explain ${query.sql}`, [...query.parameters]);
      return rows.map((row: { "QUERY PLAN": string }) => row["QUERY PLAN"]).join("\n");
    } finally {
      client.release();
    }
  }

  test("a tree's pending pauses (listed at the end of every pass) are read through the tree's own index", async () => {
    queries.length = 0;
    const waiting = await store.pauses.list({
      tenantId: "tenant-2",
      rootExecutionId: "root-12",
      statuses: [PauseStatus.Pending],
    });
    expect(waiting).toHaveLength(COUNT / 5000);
    const [query] = queries.filter((q) => /agboss_pauses/.test(q.sql));
    const plan = await planOf(query as CompiledQuery);
    expect(plan).toContain("agboss_pauses_root_status_idx");
    expect(plan).not.toMatch(/Seq Scan on agboss_pauses/);
  });

  test("a pause by id and by idempotency key, and the sweep's answered pauses, use their indexes", async () => {
    queries.length = 0;
    expect(await store.pauses.findByTenantIdAndPauseId("tenant-7", "pause-77")).toBeDefined();
    expect(await store.pauses.findByTenantIdAndIdempotencyKey("tenant-3", "step-1233")).toBeDefined();
    expect(await store.pauses.listResolvedBefore({ before: 10, limit: 100 })).toEqual([]);
    const lookups = queries.filter((q) => /agboss_pauses/.test(q.sql));
    expect(lookups).toHaveLength(3);
    for (const query of lookups) {
      const plan = await planOf(query);
      expect(plan, query.sql).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
      expect(plan, query.sql).not.toMatch(/Seq Scan on agboss_pauses/);
    }
  });

  test("the deadline index holds only pauses with a deadline, and the sweep's due pauses are read through it", async () => {
    const { rows } = await pool.query(
      "select indexdef from pg_indexes where schemaname = $1 and indexname = 'agboss_pauses_deadline_idx'",
      [schema],
    );
    expect(rows[0]?.indexdef).toMatch(/WHERE \(next_deadline_at IS NOT NULL\)/);
    await pool.query(
      `update "${schema}".agboss_pauses set next_deadline_at = 100 + asked_at where pause_id in ('pause-3', 'pause-4')`,
    );
    // Its size tells what it holds: a page or two for the two pauses with a deadline, where an index of
    // all 50,000 pauses takes about 2 MB.
    const size = await pool.query(
      `select pg_relation_size(format('%I.%I', $1::text, 'agboss_pauses_deadline_idx')::regclass)::int as bytes`,
      [schema],
    );
    expect(size.rows[0]?.bytes).toBeLessThanOrEqual(3 * 8192);
    queries.length = 0;
    const due = await store.pauses.listDueDeadlines({ now: 103, limit: 10 });
    expect(due.map((p) => p.pauseId)).toEqual(["pause-3"]);
    const [query] = queries.filter((q) => /agboss_pauses/.test(q.sql));
    const plan = await planOf(query as CompiledQuery);
    expect(plan).toContain("agboss_pauses_deadline_idx");
    expect(plan).not.toMatch(/Seq Scan on agboss_pauses/);
  });
});
