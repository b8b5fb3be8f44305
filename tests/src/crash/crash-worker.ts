// One process of the crash suite, started by the parent test as
//   node --import tsx --conditions=@agboss/source crash-worker.ts <mode> ...
// Modes:
//   start <count> <threadPrefix>   starts executions until each rests paused; prints {kind:"started",...} each
//   answer <pauseId>               app.answer; prints {kind:"answered"} once it returned, then app.idle()
//   resume <pauseId>               app.resume; prints {kind:"resumed"} or {kind:"resume-failed"}
//   recover <executionsFile> <limitMs>
//                                  app.sweepOnce in a loop until every listed execution is final or the
//                                  time passed; prints {kind:"recovered",...}
//   storm <pausesFile>             app.resume of each listed pause in turn, retrying an answer that was not
//                                  recorded (like a webhook retried by its sender); prints one line each
//   cancel <threadId> ...          app.cancel of each thread in turn; prints {kind:"cancelled"} each
// Environment: CRASH_STORE (sqlite:<path> | postgres:<schema>, the server of AGBOSS_POSTGRES_URL else the
// local test database), CRASH_APP_NAME (the application_name the Postgres pool sends, to tell this
// process's backends apart), CRASH_CLOCK_OFFSET_MS (the app's Clock is the system clock shifted by it),
// CRASH_WARP_FILE (on SIGCONT the Clock jumps to the offset written there, as after a stall that long),
// CRASH_LOG (the product's log, JSON lines), CRASH_WORKER_LIMIT_MS, and the fixture's (crash-app.ts).
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { createApp, ExecutionStatus, type LogEntry, type Logger } from "@agboss/core";
import { postgresStore } from "@agboss/store-postgres";
import { sqliteStore } from "@agboss/store-sqlite";
import { CRASH_MANAGER, CRASH_TENANT } from "./constants.js";
import { CrashApplication, CrashAsks, CrashWorkflowStart } from "./crash-app.js";
import { WarpClock } from "./warp-clock.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const FINAL: readonly string[] = [
  ExecutionStatus.Completed,
  ExecutionStatus.Failed,
  ExecutionStatus.Cancelled,
];

const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const messageOf = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error as string);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const kind of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(kind, (error: unknown) => {
    process.stderr.write(
      `CRASH-WORKER-UNCAUGHT ${kind}: ${messageOf(error)}\n${(error as Error)?.stack ?? ""}\n`,
    );
    process.exit(70);
  });
}
const limitMs = Number(process.env.CRASH_WORKER_LIMIT_MS ?? 60_000);
setTimeout(() => {
  say({ kind: "hung", afterMs: limitMs });
  process.exit(75);
}, limitMs).unref();

class FileLogger implements Logger {
  constructor(private readonly path: string | undefined) {}
  log(entry: LogEntry): void {
    if (this.path === undefined || this.path === "") return;
    appendFileSync(this.path, `${JSON.stringify({ ...entry, pid: process.pid })}\n`);
  }
}

const clock = new WarpClock(Number(process.env.CRASH_CLOCK_OFFSET_MS ?? 0));
const warpFile = process.env.CRASH_WARP_FILE;
if (warpFile !== undefined && warpFile !== "") {
  process.on("SIGCONT", () => {
    if (!existsSync(warpFile)) return;
    const offset = Number(readFileSync(warpFile, "utf8").trim());
    clock.warp(offset);
    say({ kind: "warped", offsetMs: offset });
  });
}

const target = process.env.CRASH_STORE ?? "";
const store = target.startsWith("postgres:")
  ? postgresStore({
      connectionString: process.env.AGBOSS_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/test",
      schema: target.slice("postgres:".length),
      ...(process.env.CRASH_APP_NAME ? { appName: process.env.CRASH_APP_NAME } : {}),
    })
  : target.startsWith("sqlite:")
    ? sqliteStore({ path: target.slice("sqlite:".length) })
    : undefined;
if (store === undefined)
  throw new Error(`CRASH_STORE must be sqlite:<path> or postgres:<schema>, got "${target}"`);

const [mode, ...args] = process.argv.slice(2);
const app = await createApp(CrashApplication, {
  store,
  clock,
  logger: new FileLogger(process.env.CRASH_LOG),
});
say({ kind: "ready", mode });
const credential = { tenantId: CRASH_TENANT, answeredBy: CRASH_MANAGER };
const approve = (pauseId: string) => ({ pauseId, decision: { approved: true } });

switch (mode) {
  case "start": {
    const count = Number(args[0]);
    const prefix = args[1] ?? "t";
    const asks = app.get(CrashAsks);
    let next = 0;
    const one = async () => {
      for (let i = next++; i < count; i = next++) {
        const threadId = `${prefix}-${i}`;
        // One that fails (its tree taken over while it asked, say) is said, and the others go on.
        const result = await app
          .execute(
            CrashWorkflowStart,
            { text: `refund order-${threadId}` },
            { threadId, ownerId: "alice", tenant: { tenantId: CRASH_TENANT } },
          )
          .catch((error: unknown) => {
            say({ kind: "start-failed", index: i, threadId, error: messageOf(error) });
            return undefined;
          });
        if (result === undefined) continue;
        say({
          kind: "started",
          index: i,
          threadId,
          executionId: result.executionId,
          pauseId: asks.byExecution.get(result.executionId),
          status: result.status,
        });
      }
    };
    await Promise.all([one(), one(), one()]);
    break;
  }
  case "answer": {
    const pauseId = args[0] as string;
    try {
      const receipt = await app.answer(approve(pauseId), credential);
      say({ kind: "answered", pauseId, executionId: receipt.executionId });
    } catch (error) {
      say({ kind: "answer-failed", pauseId, error: messageOf(error) });
    }
    await app.idle();
    say({ kind: "idle" });
    break;
  }
  case "resume": {
    const pauseId = args[0] as string;
    try {
      const result = await app.resume(approve(pauseId), credential);
      say({ kind: "resumed", pauseId, status: result.status });
    } catch (error) {
      say({ kind: "resume-failed", pauseId, error: messageOf(error) });
    }
    break;
  }
  case "recover": {
    const executions = JSON.parse(readFileSync(args[0] as string, "utf8")) as string[];
    const deadline = Date.now() + Number(args[1] ?? 10_000);
    const statuses: Record<string, string> = {};
    let rounds = 0;
    for (;;) {
      rounds += 1;
      await app.sweepOnce(DAY_MS);
      for (const executionId of executions) {
        const row = await app.store.executions
          .findByTenantIdAndExecutionId(CRASH_TENANT, executionId)
          .catch(() => undefined);
        statuses[executionId] = row?.status ?? "unknown";
      }
      if (executions.every((id) => FINAL.includes(statuses[id] as string))) break;
      if (Date.now() > deadline) break;
      await sleep(100);
    }
    say({ kind: "recovered", rounds, statuses });
    break;
  }
  case "storm": {
    const pauses = JSON.parse(readFileSync(args[0] as string, "utf8")) as string[];
    for (const pauseId of pauses) {
      for (let attempt = 1; ; attempt++) {
        try {
          const result = await app.resume(approve(pauseId), credential);
          say({ kind: "resumed", pauseId, status: result.status, attempt });
          break;
        } catch (error) {
          // Retry only while the answer is not recorded: a recorded one is the product's to carry out.
          const pause = await app.store.pauses
            .findByTenantIdAndPauseId(CRASH_TENANT, pauseId)
            .catch(() => undefined);
          if ((pause !== undefined && pause.status !== "pending") || attempt >= 8) {
            say({
              kind: "resume-failed",
              pauseId,
              attempt,
              pauseStatus: pause?.status ?? "unread",
              error: messageOf(error),
            });
            break;
          }
          await sleep(50);
        }
      }
    }
    break;
  }
  case "cancel": {
    for (const threadId of args) {
      await app.cancel(threadId, { tenantId: CRASH_TENANT });
      say({ kind: "cancelled", threadId });
    }
    break;
  }
  default:
    throw new Error(`unknown mode "${mode}"`);
}

await app.close();
say({ kind: "closed" });
process.exit(0);
