import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type CreateAppOptions, createApp, type ExecutionOutput, type ExecutionStep } from "@agboss/core";
import { SQLITE_PATH_ENV, sqliteStore } from "@agboss/store-sqlite";
import {
  followUpScript,
  MODEL_SCRIPT,
  RefundDeskApplication,
  RefundDeskWorkflowStart,
} from "./basics/index.js";

// The demo's database: AGBOSS_SQLITE_PATH if set, else a gitignored file beside the example.
const path =
  process.env[SQLITE_PATH_ENV] ??
  fileURLToPath(new URL("../.agboss/data/refund-desk.sqlite", import.meta.url));
const conversation = { threadId: "order:ord_1042", ownerId: "customer-dana", tenant: { tenantId: "acme" } };

function line(label: string, text: string): void {
  console.log(`  ${label.padEnd(8)} ${text}`);
}

function printSteps(steps: readonly ExecutionStep[]): void {
  for (const step of steps) {
    if (step.type === "model") {
      const what = step.calledTools.length === 0 ? "answers" : `calls ${step.calledTools.join(", ")}`;
      line("model", `turn ${step.step.toolLoopIteration} (${step.model}) ${what}`);
    } else {
      line("tool", `${step.tool} ${JSON.stringify(step.arguments)}`);
      line("", `→ ${step.error === undefined ? JSON.stringify(step.output) : `Tool error: ${step.error}`}`);
    }
  }
}

function printResult(result: ExecutionOutput): void {
  printSteps(result.record?.steps ?? []);
  line("output", JSON.stringify(result.output));
  const calls = result.record?.usage.modelCalls ?? 0;
  line(
    "status",
    `${result.status} after ${calls} model call${calls === 1 ? "" : "s"} (execution ${result.executionId})`,
  );
}

/** One process's visit: its own createApp over the shared file, one message, then close. */
async function visit(text: string, providers: CreateAppOptions["providers"] = []): Promise<void> {
  const app = await createApp(RefundDeskApplication, { store: sqliteStore({ path }), providers });
  try {
    line("request", `${conversation.ownerId} on thread ${conversation.threadId}: ${JSON.stringify(text)}`);
    printResult(await app.execute(RefundDeskWorkflowStart, { text }, { ...conversation, record: true }));
    const stored = await app.store.executions.listByTenantIdAndThreadId(
      conversation.tenant.tenantId,
      conversation.threadId,
    );
    line("stored", `thread ${conversation.threadId}: ${stored.map((e) => e.status).join(", ")}`);
  } finally {
    await app.close();
  }
}

// Start from an empty database, so every run tells the same story.
for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
console.log(`AGBoss refund desk: a scripted model on the SQLite store at ${path}\n`);

console.log("1. A customer asks for a refund (first createApp)");
await visit("Please refund order ord_1042, the parcel never arrived.");

console.log(
  "\n2. A follow-up on the same thread (a second createApp over the same file, a model that knows nothing)",
);
await visit("Did my refund go through?", [{ provide: MODEL_SCRIPT, useValue: followUpScript }]);
