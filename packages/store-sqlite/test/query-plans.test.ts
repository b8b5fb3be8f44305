import { type AgbossDatabase, KyselyStore } from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { type CompiledQuery, Kysely, SqliteDialect } from "kysely";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  checkPath,
  PATH_TABLES,
  type PlanPaths,
  runPlanWorkload,
  type SeededRows,
} from "../../store-kysely/test/plan-workload.js";
import { SQLITE_CAPABILITIES } from "../src/index.js";
import { tempDir } from "./temp-dir.js";

const TREES = 20_000;

/** The index each of the paths' own lookups must be read through. */
const INTENDED: readonly [RegExp, string][] = [
  [/from "agboss_pauses" where "tenant_id" = \? and "pause_id" = \?/, "agboss_pauses_pause_id_idx"],
  [/"agboss_pauses" set .* where "tenant_id" = \? and "pause_id" = \?/, "agboss_pauses_pause_id_idx"],
  [/from "agboss_pauses" where "tenant_id" = \? and "idempotency_key" = \?/, "agboss_pauses_idempotency_idx"],
  [
    /from "agboss_pauses" where "tenant_id" = \? and "status" in .* "root_execution_id" = \?/,
    "agboss_pauses_root_status_idx",
  ],
  [/"agboss_pauses" where "status" (=|in) .*"resolved_at"/, "agboss_pauses_resolved_idx"],
  [/"agboss_pauses" where "status" = .*"next_deadline_at"/, "agboss_pauses_deadline_idx"],
  [/from "agboss_executions" where "status" in/, "agboss_executions_status_order_idx"],
  [/from "agboss_checkpoint/, "sqlite_autoindex_agboss_checkpoint"],
  // A `without rowid` table: its primary key is the table.
  [/"agboss_leases"/, "agboss_leases USING PRIMARY KEY (key=?)"],
];

// Every statement a real pause, its resume and a recovery sweep run, EXPLAINed in a store where 20,000
// copies of a real paused tree wait in one tenant (no ANALYZE: SQLite plans as an application's file
// would have it). A full scan of a table or an index, a search narrowed only by the tenant, or a sort
// of anything wider than one tree would grow with the backlog; so would a lookup that leaves its index.
describe(`the pause, resume and sweep paths among ${TREES.toLocaleString("en-US")} waiting trees on SQLite`, () => {
  const dir = tempDir();
  const database = new Database(dir.file("plans.sqlite"));
  const queries: CompiledQuery[] = [];
  const db = new Kysely<AgbossDatabase>({
    dialect: new SqliteDialect({ database }),
    log: (event) => {
      if (event.level === "query") queries.push(event.query);
    },
  });
  const store = new KyselyStore({ db, capabilities: SQLITE_CAPABILITIES, name: "sqlite:plans" });
  let paths: PlanPaths;
  let seeded: SeededRows;

  beforeAll(async () => {
    await store.migrate();
    ({ paths, seeded } = await runPlanWorkload({ store, db: db as Kysely<unknown>, queries, trees: TREES }));
  }, 120_000);
  afterAll(async () => {
    await store.close();
    await db.destroy();
    dir.dispose();
  });

  const planOf = (query: CompiledQuery) =>
    (
      database.prepare(`explain query plan ${query.sql}`).all(...query.parameters) as { detail: string }[]
    ).map((row) => row.detail);

  /** What is wrong with the plan of `query`, if anything. */
  function problems(query: CompiledQuery): string[] {
    const plan = planOf(query);
    const out: string[] = [];
    const searches = plan.filter((d) => /^SEARCH agboss_/.test(d));
    const oneTree = searches.some((d) =>
      /\b(root_execution_id|thread_id|key|pause_id|execution_id)=\?/.test(d),
    );
    // A table may go by an alias (`SCAN w`); a `with` clause materialized by the statement (`MATERIALIZE
    // c`, one row), a table-valued function (`json_each`, a virtual table) and a `values` list are not the
    // store's tables.
    const materialized = new Set(plan.flatMap((d) => /^MATERIALIZE (\w+)/.exec(d)?.[1] ?? []));
    for (const detail of plan) {
      const scanned = /^SCAN (\w+)/.exec(detail)?.[1];
      if (
        scanned !== undefined &&
        !materialized.has(scanned) &&
        !/ VIRTUAL TABLE|ROW VALUES CLAUSE/.test(detail)
      )
        out.push(`scans: ${detail}`);
      if (
        /^SEARCH agboss_\w+ USING .*\((tenant_id|status)=\?\)$/.test(detail) &&
        !/ limit \?$/.test(query.sql)
      )
        out.push(`narrowed by one column only: ${detail}`);
      if (/USE TEMP B-TREE/.test(detail) && !oneTree) out.push(`sorts more than one tree: ${detail}`);
    }
    const intended = INTENDED.find(([sqlPattern]) => sqlPattern.test(query.sql));
    if (intended !== undefined && /^(select|update|delete)/.test(query.sql)) {
      if (!searches.some((d) => d.includes(intended[1])))
        out.push(`not through ${intended[1]}: ${plan.join("; ")}`);
    }
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
    const cursors = new Map(paths.sweep.filter((q) => /\) > \(/.test(q.sql)).map((q) => [q.sql, q]));
    expect([...cursors.values()].map((q) => planOf(q))).toEqual([
      [
        "SEARCH agboss_executions USING INDEX agboss_executions_status_order_idx (status=? AND (updated_at,tenant_id,execution_id)>(?,?,?))",
      ],
      [
        "SEARCH agboss_pauses USING INDEX agboss_pauses_resolved_idx (status=? AND (resolved_at,tenant_id,pause_id)>(?,?,?) AND resolved_at<?)",
      ],
      [
        "SEARCH agboss_pauses USING INDEX agboss_pauses_deadline_idx (status=? AND (next_deadline_at,tenant_id,pause_id)>(?,?,?) AND next_deadline_at<?)",
      ],
      // The withdrawals owed on cancelled pauses: the same index, its cancelled part.
      [
        "SEARCH agboss_pauses USING INDEX agboss_pauses_deadline_idx (status=? AND (next_deadline_at,tenant_id,pause_id)>(?,?,?) AND next_deadline_at<?)",
      ],
    ]);
    for (const query of paths.sweep) expect(planOf(query).join("\n"), query.sql).not.toMatch(/TEMP B-TREE/);
  });
});
