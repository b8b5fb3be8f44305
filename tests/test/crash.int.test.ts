// The crash suite: real worker processes over one SQLite file or one Postgres schema, killed (-9), frozen
// (SIGSTOP past their lease) or cut from their database (pg_terminate_backend) at chosen points, then
// recovered by a fresh process whose Clock runs 60 s ahead. Each scenario fails unless, on every store:
// no recorded answer is lost, no approved tool runs beyond the guarantee (once, plus one rerun with the
// same idempotency key per run a kill or stop cut off in flight), no execution is stuck after recovery,
// none ends twice, and no worker crashes. The table is printed at the end. Apart from the table: a process
// stopped (kill -9 or SIGSTOP) inside its channel's send, after it asked, and a cancel from a fresh
// process; the channel must be told exactly once that each question is withdrawn.
//   cd tests && node ../scripts/pnpm.mjs exec vitest run test/crash.int.test.ts
// CRASH_TRIALS (default 2), CRASH_STORM_RESUMES (50), CRASH_KEEP=1 (keep the journals), AGBOSS_POSTGRES_URL.
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { CrashRun, type Row, type StoreKind } from "../src/crash/harness.js";
import { reapAll } from "../src/crash/processes.js";
import {
  askedThenCancelled,
  KILL_POINTS,
  killAt,
  noFault,
  STOP_POINTS,
  stopAt,
  storm,
} from "../src/crash/scenarios.js";
import { faults, formatSummary } from "../src/crash/summary.js";

const STORES: readonly StoreKind[] = ["sqlite", "postgres"];
const rows: Row[] = [];
const errors: string[] = [];

afterEach(reapAll);
afterAll(() => {
  console.log(formatSummary(rows, errors));
});

function scenario(
  title: string,
  stores: readonly StoreKind[],
  body: (run: CrashRun) => Promise<Row>,
  timeoutMs = 120_000,
) {
  for (const store of stores) {
    test(
      `${title} [${store}]`,
      async () => {
        const run = CrashRun.create(store, title);
        try {
          const row = await body(run).catch((error: unknown) => {
            errors.push(
              `${title} [${store}]: the harness failed: ${error instanceof Error ? error.message : String(error)}`,
            );
            throw error;
          });
          rows.push(row);
          expect(faults(row), row.notes.join("\n")).toEqual({
            lost: 0,
            beyond: 0,
            stuck: 0,
            doubleEnd: 0,
            crashes: 0,
            missed: 0,
          });
        } finally {
          await run.dispose();
        }
      },
      timeoutMs,
    );
  }
}

describe("no fault", () => {
  scenario("no fault · answered in its own process", STORES, (run) =>
    noFault(run, "no fault · answered in its own process"),
  );
});

describe("kill -9, then a fresh process recovers", () => {
  for (const [name, point] of Object.entries(KILL_POINTS)) {
    scenario(`kill -9 · ${name}`, STORES, (run) => killAt(run, `kill -9 · ${name}`, point));
  }
});

describe("SIGSTOP past the lease, a fresh process takes over, then SIGCONT", () => {
  for (const [name, point] of Object.entries(STOP_POINTS)) {
    scenario(`SIGSTOP · ${name}`, STORES, (run) => stopAt(run, `SIGSTOP · ${name}`, point));
  }
});

describe("pg_terminate_backend of the resuming worker's own backends", () => {
  scenario("pg_terminate_backend · once in 50 resumes", ["postgres"], (run) =>
    storm(run, "pg_terminate_backend · once in 50 resumes", "once"),
  );
  scenario("pg_terminate_backend · every 150 ms in 50 resumes", ["postgres"], (run) =>
    storm(run, "pg_terminate_backend · every 150 ms in 50 resumes", 150),
  );
});

describe("stopped after the channel asked, before the pause was marked sent; a fresh process cancels", () => {
  for (const [how, label] of [
    ["kill", "kill -9"],
    ["stop", "SIGSTOP, then SIGCONT after the cancel"],
  ] as const) {
    for (const store of STORES) {
      test(`${label}: the channel is told once that each asked question is withdrawn, with no ref [${store}]`, async () => {
        const run = CrashRun.create(store, `asked, ${label}, then cancelled`);
        try {
          const found = await askedThenCancelled(run, 2, how);
          expect(found.asked).toHaveLength(2);
          expect(found.cancelled).toHaveLength(2);
          expect(found.withdrawn.map((w) => w.pauseId).sort()).toEqual(found.asked);
          for (const withdrawal of found.withdrawn) {
            expect(withdrawal).toMatchObject({ resolution: "cancelled", ref: null });
          }
        } finally {
          await run.dispose();
        }
      }, 120_000);
    }
  }
  for (const store of STORES) {
    test(`kill -9, cancelled while its lease still runs: nobody tells at once; the recovery sweep does once that lease would have run out, once each, with no ref [${store}]`, async () => {
      const run = CrashRun.create(store, "asked, kill -9, cancelled under a live lease, then swept");
      try {
        const found = await askedThenCancelled(run, 2, "kill", { ref: true, leaseLive: true });
        expect(found.cancelled).toHaveLength(2);
        expect(found.withdrawnBeforeSweep).toBe(0);
        // In the order the sweep found them (by when each was owed), not by pauseId.
        expect([...found.withdrawn].sort((a, b) => (a.pauseId < b.pauseId ? -1 : 1))).toEqual(
          found.asked.map((pauseId) => ({ pauseId, resolution: "cancelled", ref: null })),
        );
      } finally {
        await run.dispose();
      }
    }, 120_000);
    test(`SIGSTOP, cancelled while its lease still runs, then SIGCONT: the thawed step tells once each, with its ref, and the sweep after it nothing [${store}]`, async () => {
      const run = CrashRun.create(store, "asked, SIGSTOP, cancelled under a live lease, thawed, then swept");
      try {
        const found = await askedThenCancelled(run, 2, "stop", { ref: true, leaseLive: true });
        expect(found.withdrawnBeforeSweep).toBe(2);
        expect([...found.withdrawn].sort((a, b) => (a.pauseId < b.pauseId ? -1 : 1))).toEqual(
          found.asked.map((pauseId) => ({ pauseId, resolution: "cancelled", ref: { question: pauseId } })),
        );
      } finally {
        await run.dispose();
      }
    }, 120_000);
  }
  for (const store of STORES) {
    test(`SIGSTOP, a send that returns a ref: told by the cancel without it, then by the thawed step with it [${store}]`, async () => {
      const run = CrashRun.create(store, "asked, SIGSTOP, a ref, then cancelled");
      try {
        const found = await askedThenCancelled(run, 2, "stop", { ref: true });
        for (const pauseId of found.asked) {
          // The cancel cannot know whether the question was up yet; the step that asked it can.
          expect(found.withdrawn.filter((w) => w.pauseId === pauseId)).toEqual([
            { pauseId, resolution: "cancelled", ref: null },
            { pauseId, resolution: "cancelled", ref: { question: pauseId } },
          ]);
        }
      } finally {
        await run.dispose();
      }
    }, 120_000);
  }
});
