import { type AgbossDatabase, KyselyStore } from "@agboss/store-kysely";
import { type CompiledQuery, Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  checkPath,
  PATH_TABLES,
  type PlanPaths,
  runPlanWorkload,
  type SeededRows,
} from "../../store-kysely/test/plan-workload.js";
import { POSTGRES_CAPABILITIES } from "../src/index.js";
import { SchemaScopedPostgresDialect } from "../src/schema-introspector.js";
import { dropSchema, TEST_URL, uniqueSchema } from "./postgres-server.js";

const TREES = 20_000;

/** The index each of the paths' own lookups must be read through. */
const INTENDED: readonly [RegExp, string][] = [
  [
    /from "[^"]+"\."agboss_pauses" where "tenant_id" = \$1 and "pause_id" = \$2/,
    "agboss_pauses_pause_id_idx",
  ],
  [/"agboss_pauses" set .* where "tenant_id" = \$\d+ and "pause_id" = \$\d+/, "agboss_pauses_pause_id_idx"],
  [/"agboss_pauses" where "tenant_id" = \$1 and "idempotency_key" = \$2/, "agboss_pauses_idempotency_idx"],
  [
    /"agboss_pauses" where "tenant_id" = \$1 and "status" in .* "root_execution_id" = /,
    "agboss_pauses_root_status_idx",
  ],
  [/"agboss_pauses" where "status" (=|in) .*"resolved_at"/, "agboss_pauses_resolved_idx"],
  [/"agboss_pauses" where "status" = .*"next_deadline_at"/, "agboss_pauses_deadline_idx"],
  [/"agboss_executions" where "status" in/, "agboss_executions_status_order_idx"],
  [/"agboss_executions" where "tenant_id" = \$1 and "execution_id" = \$2/, "agboss_executions_pk"],
  [/from "[^"]+"\."agboss_checkpoints" where/, "agboss_checkpoints_pk"],
  [/from "[^"]+"\."agboss_checkpoint_blobs" where/, "agboss_checkpoint_blobs_pk"],
  [/from "[^"]+"\."agboss_checkpoint_writes" where/, "agboss_checkpoint_writes_pk"],
  [/"agboss_leases" (where|set)/, "agboss_leases_pkey"],
  [/"agboss_threads" where/, "agboss_threads_pk"],
];

// Every statement a real pause, its resume and a recovery sweep run, EXPLAINed on the real server after
// ANALYZE, in a store where 20,000 copies of a real paused tree wait in one tenant. A sequential scan,
// an index read narrowed only by the tenant, a sort of anything wider than one tree, or a lookup that
// leaves its own index would grow with the backlog; a planner or index change shows here.
describe(`the pause, resume and sweep paths among ${TREES.toLocaleString("en-US")} waiting trees on Postgres`, () => {
  const schema = uniqueSchema();
  const pool = new pg.Pool({ connectionString: TEST_URL, max: 2 });
  const queries: CompiledQuery[] = [];
  const db = new Kysely<AgbossDatabase>({
    dialect: new SchemaScopedPostgresDialect({ pool }, schema),
    log: (event) => {
      if (event.level === "query") queries.push(event.query);
    },
  });
  const store = new KyselyStore({ db, schema, capabilities: POSTGRES_CAPABILITIES, name: "postgres:plans" });
  let paths: PlanPaths;
  let seeded: SeededRows;
  const plans = new Map<string, string>();

  beforeAll(async () => {
    await store.migrate();
    ({ paths, seeded } = await runPlanWorkload({
      store,
      db: db as Kysely<unknown>,
      queries,
      trees: TREES,
      schema,
      afterSeed: async () => {
        await pool.query(`analyze`);
      },
    }));
    for (const query of [...paths.pause, ...paths.resume, ...paths.sweep]) {
      if (plans.has(query.sql) || !/^(select|update|delete|with)/.test(query.sql)) continue;
      const { rows } = await pool.query(`explain ${query.sql}`, [...query.parameters]);
      plans.set(query.sql, rows.map((row: { "QUERY PLAN": string }) => row["QUERY PLAN"]).join("\n"));
    }
  }, 300_000);
  afterAll(async () => {
    await db.destroy();
    await dropSchema(schema);
  });

  /** What is wrong with the plan of `query`, if anything. */
  function problems(query: CompiledQuery): string[] {
    const plan = plans.get(query.sql);
    if (plan === undefined) return [];
    const out: string[] = [];
    if (/Seq Scan on agboss_/.test(plan)) out.push(`scans: ${plan}`);
    const conditions = [...plan.matchAll(/Index Cond: (.*)/g)].map((m) => m[1] as string);
    const oneTree = conditions.some((c) =>
      /\b(root_execution_id|thread_id|key|pause_id|execution_id) = /.test(c),
    );
    for (const condition of conditions) {
      if (/^\(\((tenant_id|status) = [^)]*\)\)$/.test(condition) && !/ limit \$\d+$/.test(query.sql))
        out.push(`narrowed by one column only: ${condition}`);
    }
    if (/\bSort\b/.test(plan) && !oneTree) out.push(`sorts more than one tree: ${plan}`);
    const intended = INTENDED.find(([sqlPattern]) => sqlPattern.test(query.sql));
    if (intended !== undefined && !plan.includes(intended[1]))
      out.push(`not through ${intended[1]}: ${plan}`);
    return out;
  }

  const check = (statements: readonly CompiledQuery[], touches: readonly string[]) =>
    checkPath({ statements, touches, seeded, trees: TREES, problems });

  test("a pause: every statement reads through an index that bounds it", () => {
    check(paths.pause, PATH_TABLES.pause);
  });

  test("a resume: every statement reads through an index that bounds it", () => {
    check(paths.resume, PATH_TABLES.resume);
  });

  test("a follower's read of a tree (app.follow): every statement reads through an index that bounds it", () => {
    check(paths.follow, PATH_TABLES.follow);
  });

  test("the sweep: every page starts at its cursor in its index, and nothing is sorted", () => {
    check(paths.sweep, PATH_TABLES.sweep);
    const cursors = [...plans.entries()].filter(([sql]) => /\) > \(/.test(sql)).map(([, plan]) => plan);
    expect(cursors).toHaveLength(4);
    expect(cursors[0]).toMatch(
      /Index Scan using agboss_executions_status_order_idx[\s\S]*Index Cond: .*ROW\(updated_at, tenant_id, execution_id\) > ROW/,
    );
    expect(cursors[1]).toMatch(
      /Index Scan using agboss_pauses_resolved_idx[\s\S]*Index Cond: .*ROW\(resolved_at, tenant_id, pause_id\) > ROW/,
    );
    // The due deadlines of pending pauses, then the withdrawals owed on cancelled ones: one index.
    for (const cursor of [cursors[2], cursors[3]]) {
      expect(cursor).toMatch(
        /Index Scan using agboss_pauses_deadline_idx[\s\S]*Index Cond: .*ROW\(next_deadline_at, tenant_id, pause_id\) > ROW/,
      );
    }
    for (const query of paths.sweep) expect(plans.get(query.sql) ?? "", query.sql).not.toMatch(/\bSort\b/);
  });
});
