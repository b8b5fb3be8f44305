// The crash suite's scenarios: how each trial reaches its point (a gate, a ledger line, a row seen from
// the parent's own connection) and what it does there (kill -9, SIGSTOP past the lease, pg_terminate_backend).
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CRASH_TENANT } from "./constants.js";
import { type CrashRun, RECOVER_OFFSET_MS, type Row, type Started, type StoreKind } from "./harness.js";
import { PointMissedError, type Worker, type WorkerLine } from "./processes.js";

/** Trials per point and store. */
export const TRIALS = Number(process.env.CRASH_TRIALS ?? 2);
/** Resumes of the Postgres storm. */
export const STORM_RESUMES = Number(process.env.CRASH_STORM_RESUMES ?? 50);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long moving a tree after its answer took without faults, per store: the window of random kills. */
const moveMs: Record<StoreKind, number[]> = { sqlite: [], postgres: [] };

/** Spawns an answer worker and waits until it printed that the answer is recorded. */
async function answer(run: CrashRun, e: Started, env: Record<string, string> = {}): Promise<Worker> {
  const worker = run.spawn("answer", [e.pauseId], env);
  const line = await worker.waitLine(
    (l) => l.kind === "answered" || l.kind === "answer-failed",
    "the answer recorded",
  );
  if (line.kind === "answer-failed")
    throw new PointMissedError(`${worker.name}: answer failed: ${line.error}`);
  run.answered.add(e.pauseId);
  return worker;
}

/** Baseline: each answer in its own process, nothing killed. Also times the moves for the random kills. */
export async function noFault(run: CrashRun, title: string): Promise<Row> {
  const executions = await run.start(TRIALS + 1);
  await Promise.all(
    executions.map(async (e) => {
      let worker: Worker | undefined;
      try {
        worker = await answer(run, e);
        const answered = worker.lines.find((l) => l.kind === "answered");
        const idle = await worker.waitLine((l) => l.kind === "idle", "the tree moved");
        moveMs[run.kind].push(idle.receivedAt - (answered?.receivedAt ?? idle.receivedAt));
      } catch (error) {
        run.missedPoint(error);
      }
      await worker?.waitExit(30_000);
    }),
  );
  await run.recover(executions);
  return run.score(title, executions);
}

export const KILL_POINTS = {
  "answer recorded": "answer-recorded",
  "pause taken": "pause-taken",
  "tool started": "tool-started",
  "payment applied, not logged": "effect-applied",
  "tool returned": "tool-returned",
  "checkpoint writes (random offsets)": "checkpoint",
  "model's next turn": "model-turn",
} as const;
export type KillPoint = (typeof KILL_POINTS)[keyof typeof KILL_POINTS];

/** A random kill that came after the tree had moved: it tested nothing, so the trial is redone. */
class LateKillError extends PointMissedError {}

/**
 * kill -9 one answering process per execution at `point`, then a fresh process recovers them all. A
 * random kill (checkpoint writes) that lands after the tree moved is redone on a spare execution with
 * half the window, twice at most; only then does it count as missed.
 */
export async function killAt(run: CrashRun, title: string, point: KillPoint): Promise<Row> {
  const trials = point === "checkpoint" ? TRIALS + 1 : TRIALS;
  const spares = point === "checkpoint" ? 2 * trials : 0;
  const started = await run.start(trials + spares);
  const pool = started.slice(trials);
  const used = started.slice(0, trials);
  await Promise.all(
    started.slice(0, trials).map(async (first) => {
      let e = first;
      for (let scale = 1; ; scale /= 2) {
        const spare = scale > 0.25 ? pool.shift() : undefined;
        const landed = await killTrial(run, e, point, scale, spare !== undefined);
        if (landed || spare === undefined) {
          if (spare !== undefined) pool.unshift(spare);
          return;
        }
        used.push(spare);
        e = spare;
      }
    }),
  );
  await run.recover(used);
  return run.score(title, used);
}

/** One kill; false when a random kill came too late and `redo` allows another trial. */
async function killTrial(
  run: CrashRun,
  e: Started,
  point: KillPoint,
  scale: number,
  redo: boolean,
): Promise<boolean> {
  const env: Record<string, string> = {};
  // Gates hold the process at its point so the kill lands there, not a moment later.
  if (point === "answer-recorded") env.CRASH_GATE_RESUME = run.gate(`resume-${e.index}`);
  if (point === "pause-taken" || point === "tool-started")
    env.CRASH_GATE_TOOL_STARTED = run.gate(`tool-${e.index}`);
  if (point === "effect-applied") env.CRASH_GATE_EFFECT_APPLIED = run.gate(`effect-${e.index}`);
  // Every other "tool returned" trial waits until the parent sees the tool's result stored (the model held
  // at its gate meanwhile), so a rerun there is beyond the guarantee; the others die while it finishes.
  const afterStored = point === "tool-returned" && e.index % 2 === 1;
  if (point === "model-turn" || afterStored) env.CRASH_GATE_MODEL = run.gate(`model-${e.index}`);
  let worker: Worker | undefined;
  let landed = true;
  try {
    worker = await answer(run, e, env);
    const w = worker;
    switch (point) {
      case "answer-recorded":
        break;
      case "pause-taken":
        await run.until(
          async () => (await run.db.pauseStatus(CRASH_TENANT, e.pauseId)) === "taken",
          w,
          "the pause taken",
        );
        break;
      case "tool-started":
        await run.untilLedger((l) => l.event === "gate" && l.gate === "tool-started", w, "the tool started");
        break;
      case "effect-applied":
        await run.untilLedger(
          // The run's own call applied the key (a first run always does).
          (l) => l.event === "gate" && l.gate === "effect-applied" && l.applied === true,
          w,
          "the payment applied",
        );
        break;
      case "tool-returned": {
        await run.untilLedger((l) => l.event === "tool-end", w, "the tool's end");
        if (!afterStored) break;
        const receipt = run.ledger().find((l) => l.event === "tool-end" && l.pid === w.pid)
          ?.receipt as string;
        await run.until(() => run.db.holds(receipt), w, "the tool's result stored");
        run.notes.push(`${w.name} killed once the tool's result was stored`);
        break;
      }
      case "checkpoint": {
        const samples = [...moveMs[run.kind]].sort((a, b) => a - b);
        const median = samples.length === 0 ? 60 : (samples[Math.floor(samples.length / 2)] as number);
        const window = median * 0.9 * scale;
        const offset = Math.random() * window;
        await sleep(offset);
        if (w.exited !== undefined || w.lines.some((l) => l.kind === "idle"))
          throw new LateKillError(
            `${w.name}: the tree had moved before the kill at +${offset.toFixed(0)} ms`,
          );
        run.notes.push(
          `${w.name} killed +${offset.toFixed(0)} ms after the answer (window ${window.toFixed(0)} ms)`,
        );
        break;
      }
      case "model-turn":
        await run.untilLedger((l) => l.event === "gate" && l.gate === "model", w, "the model's next turn");
        break;
    }
  } catch (error) {
    if (error instanceof LateKillError && redo) {
      landed = false;
      run.notes.push(`${error.message}; redone on another execution`);
    } else run.missedPoint(error);
  }
  if (worker === undefined) return landed;
  await worker.kill9();
  await run.markInterrupted(worker, "kill -9");
  return landed;
}

export const STOP_POINTS = {
  "before the tool": { gate: "resume", env: "CRASH_GATE_RESUME" },
  "during the tool": { gate: "tool-started", env: "CRASH_GATE_TOOL_STARTED" },
  "after its side effect": { gate: "after-effect", env: "CRASH_GATE_AFTER_EFFECT" },
} as const;
export type StopPoint = (typeof STOP_POINTS)[keyof typeof STOP_POINTS];

/**
 * SIGSTOP the process that moves each tree at `point`, past its lease: while it is frozen, a fresh
 * process (Clock 60 s ahead) takes the trees over. Then each frozen one gets SIGCONT, its Clock jumps
 * the same 60 s (as after a real stall: its timers fall due), its gate opens, and it runs out.
 */
export async function stopAt(run: CrashRun, title: string, point: StopPoint): Promise<Row> {
  const executions = await run.start(TRIALS);
  const frozen = await Promise.all(executions.map((e) => freeze(run, e, point)));
  await run.recover(executions);
  await Promise.all(
    frozen.map(async (f) => {
      if (f === undefined) return;
      writeFileSync(f.warpFile, String(RECOVER_OFFSET_MS));
      f.worker.resume();
      try {
        await f.worker.waitLine((l) => l.kind === "warped", "its clock's jump", 10_000);
      } catch (error) {
        run.missedPoint(error);
      }
      run.openGate(f.gate);
      await f.worker.waitExit(30_000);
    }),
  );
  return run.score(title, executions);
}

async function freeze(
  run: CrashRun,
  e: Started,
  point: StopPoint,
): Promise<{ worker: Worker; gate: string; warpFile: string } | undefined> {
  const gate = run.gate(`${point.gate}-${e.index}`);
  const warpFile = join(run.dir, `warp-${e.index}`);
  let worker: Worker | undefined;
  try {
    worker = await answer(run, e, { [point.env]: gate, CRASH_WARP_FILE: warpFile });
    const w = worker;
    await run.untilLedger((l) => l.event === "gate" && l.gate === point.gate, w, `the ${point.gate} gate`);
    await w.stop();
    await run.markInterrupted(w, "SIGSTOP");
    return { worker: w, gate, warpFile };
  } catch (error) {
    run.missedPoint(error);
    if (worker !== undefined) {
      await worker.kill9();
      await run.markInterrupted(worker, "kill -9");
    }
    return undefined;
  }
}

/** How often a storm worker that crashed is started again on the answers still to give (like a supervisor). */
const STORM_RESTARTS = 3;

/**
 * Postgres: one worker resumes the executions one after another while the parent terminates that worker's
 * own backends (found by its unique application_name): once, or every 150 ms. A worker that crashes is
 * counted, and started again (at most 3 times) on the pauses still pending, so the storm covers the
 * resumes. Then a fresh process recovers.
 */
export async function storm(run: CrashRun, title: string, every: number | "once"): Promise<Row> {
  const executions = await run.start(STORM_RESUMES);
  let terminations = 0;
  let terminated = 0;
  let stormWorkers = 0;
  const lines: WorkerLine[] = [];
  for (let round = 0; round <= STORM_RESTARTS; round++) {
    const pending: string[] = [];
    for (const e of executions)
      if ((await run.db.pauseStatus(CRASH_TENANT, e.pauseId)) === "pending") pending.push(e.pauseId);
    if (pending.length === 0) break;
    const file = join(run.dir, `pauses-${round}.json`);
    writeFileSync(file, JSON.stringify(pending));
    const appName = `crash-storm-${randomBytes(6).toString("hex")}`;
    // The pool names its connections `agboss:<appName>` (see openOwnedPool); seen below before any terminate.
    const applicationName = `agboss:${appName}`;
    const worker = run.spawn("storm", [file], { CRASH_APP_NAME: appName });
    stormWorkers += 1;
    try {
      await worker.waitLine((l) => l.kind === "ready", "the worker ready");
      await run.until(
        async () => (await run.db.backendsOf(applicationName)) > 0,
        worker,
        `a backend named ${applicationName}`,
      );
      const answers = () =>
        worker.lines.filter((l) => l.kind === "resumed" || l.kind === "resume-failed").length;
      if (every === "once") {
        if (terminations === 0) {
          await run.until(() => answers() >= Math.min(10, pending.length - 1), worker, "ten resumes");
          terminated += await run.db.terminateBackends(applicationName);
          terminations += 1;
        }
      } else {
        while (worker.exited === undefined) {
          terminated += await run.db.terminateBackends(applicationName);
          terminations += 1;
          await Promise.race([sleep(every), worker.exit]);
        }
      }
    } catch (error) {
      run.missedPoint(error);
    }
    await worker.waitExit(120_000);
    lines.push(...worker.lines);
    if (!worker.crashed()) break;
  }
  if (terminated === 0) {
    run.missed += 1;
    run.notes.push("missed: no backend of a storm worker was terminated");
  }
  const failed = lines.filter((l) => l.kind === "resume-failed");
  const retried = lines.filter((l) => l.kind === "resumed" && Number(l.attempt) > 1).length;
  run.notes.push(
    `${stormWorkers} storm worker(s), ${terminations} terminations, ${terminated} backends terminated; ` +
      `${failed.length} resumes threw after their answer was recorded, ${retried} answers retried by the client`,
  );
  for (const l of lines) if (l.kind === "resumed") run.answered.add(l.pauseId as string);
  const reasons = new Map<string, number>();
  for (const l of failed) {
    const reason = String(l.error).slice(0, 160);
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  for (const [reason, count] of reasons) run.notes.push(`resume threw ${count}x: ${reason}`);
  await run.recover(executions);
  return run.score(title, executions);
}

/** What became of the questions a killed process asked before it could mark them sent. */
export interface AskedThenCancelled {
  /** The pauses the channel asked about (one per execution), sorted. */
  readonly asked: readonly string[];
  /** Each `withdraw` the channel got, in order. */
  readonly withdrawn: readonly { pauseId: string; resolution: unknown; ref: unknown }[];
  /** The threads the fresh process cancelled. */
  readonly cancelled: readonly string[];
  /** With `leaseLive`: the withdrawals made before the recovery sweep ran (the rest are the sweep's). */
  readonly withdrawnBeforeSweep?: number;
}

/**
 * Starts `count` executions and stops their process inside the channel's `send`, after it asked and
 * before the pause was marked sent: kill -9, or SIGSTOP. Then a fresh process (Clock 60 s ahead: the
 * lease has lapsed) cancels each thread. The questions were asked, so their channel must be told they
 * are withdrawn. A process only frozen is then let go on: its sends return into cancelled pauses, which
 * it must not tell the channel of a second time. With `leaseLive`, the fresh process cancels on the same
 * Clock, while the stopped process's lease still runs (it takes it over), and a recovery sweep with the
 * Clock 60 s ahead runs after it (and after the frozen process is let go on).
 */
export async function askedThenCancelled(
  run: CrashRun,
  count: number,
  how: "kill" | "stop",
  options: { readonly ref?: boolean; readonly leaseLive?: boolean } = {},
): Promise<AskedThenCancelled> {
  const prefix = `t${randomBytes(3).toString("hex")}`;
  const gate = run.gate("asked");
  const starter = run.spawn("start", [String(count), prefix], {
    CRASH_GATE_ASKED: gate,
    ...(options.ref === true ? { CRASH_SEND_REF: "1" } : {}),
  });
  await run.until(
    () =>
      run.ledger().filter((e) => e.pid === starter.pid && e.event === "gate" && e.gate === "asked").length >=
      count,
    starter,
    `${count} questions asked`,
  );
  if (how === "kill") await starter.kill9();
  else await starter.stop();
  const threads = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const canceller = run.spawn("cancel", threads, {
    CRASH_CLOCK_OFFSET_MS: String(options.leaseLive === true ? 0 : RECOVER_OFFSET_MS),
  });
  await canceller.waitExit(60_000);
  if (canceller.crashed())
    throw new Error(
      `the cancelling worker failed (${canceller.describeExit()}): ${canceller.stderr.slice(0, 2000)}`,
    );
  if (how === "stop") {
    // Thawed at once, its sends return before its own watchdog sees the lease lapse: their steps go on
    // to mark the pauses sent, and find them cancelled.
    run.openGate(gate);
    starter.resume();
    await starter.waitExit(60_000);
    // Each send returned (not cut off by the pass's watchdog, which a long freeze would fire), and each
    // execution ended there (its tree was taken over) after its step tried to mark the pause sent and
    // told the channel or not: otherwise the test would prove nothing of that step.
    const returned = run.ledger().filter((e) => e.pid === starter.pid && e.event === "gate-open").length;
    if (returned < count) throw new Error(`the thawed process returned from ${returned} of ${count} sends`);
    const ended = starter.lines.filter((l) => l.kind === "start-failed").length;
    if (ended < count) {
      throw new Error(
        `the thawed process ended ${ended} of ${count} executions (${starter.describeExit()}): ${starter.stderr.slice(0, 2000)}`,
      );
    }
  }
  let withdrawnBeforeSweep: number | undefined;
  if (options.leaseLive === true) {
    withdrawnBeforeSweep = run.events().filter((e) => e.event === "withdrawn").length;
    const sweeper = await run.recover([]);
    if (sweeper.crashed())
      throw new Error(
        `the sweeping worker failed (${sweeper.describeExit()}): ${sweeper.stderr.slice(0, 2000)}`,
      );
  }
  const events = run.events();
  return {
    ...(withdrawnBeforeSweep === undefined ? {} : { withdrawnBeforeSweep }),
    asked: events
      .filter((e) => e.event === "asked")
      .map((e) => e.pauseId as string)
      .sort(),
    withdrawn: events
      .filter((e) => e.event === "withdrawn")
      .map((e) => ({ pauseId: e.pauseId as string, resolution: e.resolution, ref: e.ref })),
    cancelled: canceller.lines.filter((l) => l.kind === "cancelled").map((l) => l.threadId as string),
  };
}
