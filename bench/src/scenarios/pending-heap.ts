import { createRequire } from "node:module";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import v8 from "node:v8";
import vm from "node:vm";
import { type App, createApp, ExecutionStatus, PauseStatus, type StoreFactory } from "@agboss/core";
import { postgresStore } from "@agboss/store-postgres";
import { sqliteStore } from "@agboss/store-sqlite";
import { ApprovalApplication, ManagerInbox, REFUND_REQUEST, RefundStart } from "../approval-app.js";
import { quote } from "../postgres.js";
import type { ScenarioContext, SoloResult, SoloScenario } from "./scenario.js";

// What a waiting pause costs the process that made it: the refund workflow runs until its tool's channel
// pauses it, again and again on one app, and the heap is weighed after forced collections as the pauses
// pile up. A pause rests in the store alone, so the heap is to stay where it was: the target is 0 bytes
// per pending pause.

/** How many weighings follow the baseline, evenly spaced over the pauses (so `--heap-pauses` is at least this). */
export const HEAP_MARKS = 20;
/**
 * Pauses made before the baseline: enough to fill what the app keeps up to a bound (its recent
 * checkpoints' channel origins, its executions' budgets: 1,000 entries each). Half come before a first
 * weighing that is thrown away, half after it: the collections of that weighing let the engine drop
 * code only the start-up ran, which would otherwise show as the heap falling after the baseline.
 */
const WARMUP = 2_000;
const TENANT = "bench-heap-tenant";

/** The better-sqlite3 calls the count needs (the bench does not need its type package). */
type CountingDatabase = {
  prepare(sql: string): { get(...values: unknown[]): unknown };
  close(): void;
};
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly?: boolean },
) => CountingDatabase;

/**
 * The approval app's inbox, keeping nothing: the bench's own stand-in for a manager's inbox would hold
 * every pauseId it is given, which is the bench's memory, not AGBoss's.
 */
class DiscardingInbox extends ManagerInbox {
  given = 0;

  override put(): void {
    this.given += 1;
  }
}

/** `gc()`, which Node gives only to a process started with `--expose-gc`: turned on here for this run. */
function collector(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

/** The heap spaces that hold compiled code, bytecode and their metadata, not a program's objects. */
const CODE_SPACES = /code|trusted|read_only/;

/**
 * The heap after full collections, once what they freed has settled (three in a row, a turn apart):
 * all of it, and the part that holds objects (what a pause left behind would be), apart from the code
 * the engine compiles and drops as it goes.
 */
async function weighHeap(gc: () => void): Promise<{ heapUsed: number; objects: number; external: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await nextTurn();
  }
  const { heapUsed, external } = process.memoryUsage();
  const objects = v8
    .getHeapSpaceStatistics()
    .filter((space) => !CODE_SPACES.test(space.space_name))
    .reduce((sum, space) => sum + space.space_used_size, 0);
  return { heapUsed, objects, external };
}

/** Least-squares slope of y over x: bytes per pause across the weighings. */
function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

interface Weighing {
  /** Pauses made (and still pending) since the baseline. */
  readonly pending: number;
  readonly heapUsed: number;
  /** The heap's object spaces (new, old, large objects): `heapUsed` less code, bytecode and metadata. */
  readonly objects: number;
  readonly external: number;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

export const pendingHeapScenario: SoloScenario = {
  kind: "solo",
  id: "pending-heap",
  title: "process heap per pending pause",
  description:
    "one app makes --heap-pauses fresh pauses (the refund workflow until its channel pauses it) and the process heap is weighed after forced collections at twenty points over them; bytes of its object spaces per pending pause, target 0.",
  backends: ["sqlite", "postgres"],
  // 100,000 real executions by default: minutes, so only when named.
  onlyWhenNamed: true,
  async run(context: ScenarioContext): Promise<SoloResult> {
    const { progress } = context;
    const total = context.heapPauses;
    const warmup = WARMUP;
    const gc = collector();
    const inbox = new DiscardingInbox();
    let store: StoreFactory;
    let countPending: () => Promise<number>;
    let cleanup = async () => {};
    if (context.backend === "postgres") {
      const server = context.postgresServer;
      if (server === undefined) throw new Error("--backend postgres needs a server (the runner opens one)");
      const schema = await server.freshSchema("pending_heap", "store");
      cleanup = () => server.dropSchema(schema);
      store = postgresStore({ connectionString: server.url, schema });
      countPending = async () => {
        const { rows } = await server.query<{ n: string }>(
          `select count(*) as n from ${quote(schema)}.agboss_pauses where tenant_id = $1 and status = $2`,
          [TENANT, PauseStatus.Pending],
        );
        return Number(rows[0]?.n);
      };
    } else {
      const path = join(context.dir, "pending-heap.sqlite");
      const synchronous = context.synchronous === "default" ? "FULL" : context.synchronous;
      store = sqliteStore({ path, synchronous, walCheckpoints: context.walCheckpoints });
      countPending = async () => {
        const database = new Database(path, { readonly: true });
        try {
          const row = database
            .prepare("select count(*) as n from agboss_pauses where tenant_id = ? and status = ?")
            .get(TENANT, PauseStatus.Pending) as { n: number };
          return row.n;
        } finally {
          database.close();
        }
      };
    }
    let app: App | undefined;
    const weighings: Weighing[] = [];
    try {
      app = await createApp(ApprovalApplication, {
        store,
        providers: [{ provide: ManagerInbox, useValue: inbox }],
      });
      let made = 0;
      const pauseOnce = async () => {
        const threadId = `heap-${made}`;
        const result = await (app as App).execute(
          RefundStart,
          { text: REFUND_REQUEST },
          { threadId, ownerId: "customer-1", tenant: { tenantId: TENANT } },
        );
        if (result.status !== ExecutionStatus.Paused || result.pending.length !== 1) {
          throw new Error(`execution ${made} did not rest paused: ${result.status}`);
        }
        made += 1;
      };
      progress(`  warm-up: ${warmup.toLocaleString("en-US")} pauses`);
      for (let i = 0; i < warmup / 2; i++) await pauseOnce();
      await weighHeap(gc);
      while (made < warmup) await pauseOnce();
      const base = made;
      const weigh = async () => {
        const heap = await weighHeap(gc);
        weighings.push({ pending: made - base, ...heap });
        progress(
          `  ${(made - base).toLocaleString("en-US")} / ${total.toLocaleString("en-US")} pauses: heap ${mb(heap.heapUsed)} (objects ${mb(heap.objects)}), external ${mb(heap.external)}`,
        );
      };
      await weigh();
      for (let mark = 1; mark <= HEAP_MARKS; mark++) {
        const until = base + Math.round((total * mark) / HEAP_MARKS);
        while (made < until) await pauseOnce();
        await weigh();
      }
      const pending = await countPending();
      if (pending !== made)
        throw new Error(`expected ${made} pending pauses in the store, counted ${pending}`);
      if (inbox.given !== made)
        throw new Error(`the channel was asked ${inbox.given} times for ${made} pauses`);
    } finally {
      try {
        await app?.close();
      } finally {
        await cleanup();
      }
    }
    // Bytes per pause: the least-squares slope of the object spaces through the second half of the
    // weighings (from half the pauses on, 11 points). The first half is left out of it because the heap
    // still settles there (it falls by some hundreds of KB after the baseline: what the start-up left
    // reachable, dropped later); a pause that left something behind adds as much in either half. What
    // the engine compiles or drops meanwhile (code spaces) moves `heapUsed` by hundreds of KB either way
    // and says nothing about pauses. A cache that fills and empties has no slope, so the highest weighing
    // above the baseline is given too: what the app holds at most, whatever it is.
    const first = weighings[0] as Weighing;
    const last = weighings.at(-1) as Weighing;
    const secondHalf = weighings.slice(HEAP_MARKS / 2);
    const perPause = slope(secondHalf.map((w) => ({ x: w.pending, y: w.objects })));
    const allPerPause = slope(weighings.map((w) => ({ x: w.pending, y: w.objects })));
    const heapSlope = slope(secondHalf.map((w) => ({ x: w.pending, y: w.heapUsed })));
    const peak = weighings.reduce((top, w) => (w.objects > top.objects ? w : top), first);
    const externalPerPause = (last.external - first.external) / Math.max(1, last.pending);
    // Zero, as a measurement can show it: less than a byte a pause (under 100 KB over 100,000).
    const met = perPause < 1;
    const row = (name: string, value: (w: Weighing) => string) =>
      `| ${name} | ${weighings.map(value).join(" | ")} |`;
    return {
      lines: [
        row("pending", (w) => w.pending.toLocaleString("en-US")),
        `|:--|${weighings.map(() => "--:").join("|")}|`,
        row("objects", (w) => mb(w.objects)),
        row("heap used", (w) => mb(w.heapUsed)),
        row("external", (w) => mb(w.external)),
        `  object heap per pending pause: ${perPause.toFixed(2)} B (slope through the second half of the weighings; through all ${weighings.length}: ${allPerPause.toFixed(2)} B; all of the heap, second half: ${heapSlope.toFixed(2)} B; external ${externalPerPause.toFixed(2)} B); at most ${mb(peak.objects - first.objects)} above the baseline (at ${peak.pending.toLocaleString("en-US")}); ${last.pending.toLocaleString("en-US")} pauses after ${warmup.toLocaleString("en-US")} of warm-up, each weighing after 3 forced collections`,
        `  target 0 B a pending pause (under 1 B as measured): ${met ? "met" : "NOT met"}`,
      ],
      figures: {
        pauses: last.pending,
        warmup,
        weighings,
        objectBytesPerPause: perPause,
        objectBytesPerPauseAllWeighings: allPerPause,
        heapBytesPerPause: heapSlope,
        externalBytesPerPause: externalPerPause,
        peakObjectBytesAboveBaseline: peak.objects - first.objects,
        target: 0,
      },
      ...(met ? {} : { failures: [`object heap per pending pause ${perPause.toFixed(2)} B, target 0`] }),
    };
  },
};
