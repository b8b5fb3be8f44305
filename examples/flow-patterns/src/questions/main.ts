import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { answerInTerminal, showProgress, TerminalSessionEnd } from "@agboss/channel-terminal";
import { createApp, type PauseEntry } from "@agboss/core";
import { SQLITE_PATH_ENV, sqliteStore } from "@agboss/store-sqlite";
import {
  DamageAssessmentChannel,
  PickupSlotChannel,
  ReturnsApplication,
  ReturnsLedger,
  ReturnsWorkflowStart,
} from "./index.js";

// The example's database: AGBOSS_SQLITE_PATH if set, else a gitignored file beside the example.
const path =
  process.env[SQLITE_PATH_ENV] ??
  fileURLToPath(new URL("../../.agboss/data/questions.sqlite", import.meta.url));
const dana = { ownerId: "dana", tenantId: "acme" };
const threadId = "returns:ord_2231";
const request =
  "Order ord_2231 came back with a cracked lid. The customer wants it collected; photos attached.";
// The question roles answered in this terminal, beside any approvals of TerminalUserChannel.
const roles = [PickupSlotChannel, DamageAssessmentChannel];

function line(label: string, text: string): void {
  console.log(`  ${label.padEnd(9)} ${text}`);
}

function auditLine(entry: PauseEntry): string {
  return `${entry.step.toolCall?.tool ?? entry.role}: ${entry.kind} answered by ${entry.responder ?? "nobody"} (${entry.resolution}) with ${JSON.stringify(entry.answer)}`;
}

// Start from an empty database, so every run tells the same story.
for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
console.log(
  `AGBoss questions: a returns desk answers two questions in the terminal (SQLite store at ${path})\n`,
);

console.log("1. dana reports a damaged return; the agent's model calls both tools in one turn");
line("request", JSON.stringify(request));
const asking = await createApp(ReturnsApplication, { store: sqliteStore({ path }) });
try {
  // Streamed, so the terminal shows each step while the run works; the result is what execute returns.
  const paused = await showProgress(
    asking.stream(
      ReturnsWorkflowStart,
      { text: request },
      { threadId, ownerId: dana.ownerId, tenant: { tenantId: dana.tenantId } },
    ),
  );
  line(
    "status",
    `${paused.status}: ${paused.pending.length} questions wait for dana (execution ${paused.executionId})`,
  );
  for (const pause of paused.pending) {
    line(
      "pending",
      `${pause.kind} of ${pause.channel}: ${pause.ask.tool} ${JSON.stringify(pause.ask.arguments)}`,
    );
  }
} finally {
  await asking.close(); // nothing is held in memory: the questions rest in the SQLite file
}

console.log("\n2. Another app over the same file asks dana in the terminal (↑/↓, Enter; Ctrl-C to stop)");
const answering = await createApp(ReturnsApplication, { store: sqliteStore({ path }) });
try {
  const session = await answerInTerminal(answering, { ...dana, roles, record: true });
  if (session.end !== TerminalSessionEnd.NoneOpen) {
    console.log("\nThe questions still wait in the store; run the example again to start over.");
    process.exitCode = session.end === TerminalSessionEnd.Interrupted ? 130 : 0;
  } else {
    const last = session.answers.at(-1)?.result;
    console.log("\n3. Both answered: the execution went on");
    line("tools ran", answering.get(ReturnsLedger).runs.join(", ") || "none");
    line("output", JSON.stringify(last?.output));
    line("status", `${last?.status} (execution ${last?.executionId})`);
    console.log("\n4. The audit trail (result.record.pauses): who answered what; sensitive fields masked");
    for (const entry of last?.record?.pauses ?? []) line("pause", auditLine(entry));
  }
} finally {
  await answering.close();
}
