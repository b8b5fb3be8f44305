import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { answerInTerminal, showProgress, TerminalSessionEnd } from "@agboss/channel-terminal";
import { createApp, type PauseEntry } from "@agboss/core";
import { SQLITE_PATH_ENV, sqliteStore } from "@agboss/store-sqlite";
import { ReviewApplication, ReviewLedger, ReviewWorkflowStart } from "./index.js";

// The example's database: AGBOSS_SQLITE_PATH if set, else a gitignored file beside the example.
const path =
  process.env[SQLITE_PATH_ENV] ??
  fileURLToPath(new URL("../../.agboss/data/parallel.sqlite", import.meta.url));
const dana = { ownerId: "dana", tenantId: "acme" };
const threadId = "purchase:po_7731";
const request = "Buy 40 sensor kits from Acme Corp for 48,000 EUR, delivery in week 32.";

function line(label: string, text: string): void {
  console.log(`  ${label.padEnd(9)} ${text}`);
}

function auditLine(entry: PauseEntry): string {
  const decision = entry.decision as { approved?: boolean; reason?: string } | undefined;
  const what =
    decision?.approved === true ? "approved" : `rejected${decision?.reason ? ` (${decision.reason})` : ""}`;
  return `${entry.step.toolCall?.tool ?? entry.role}: ${what} by ${entry.responder ?? "nobody"} (${entry.resolution})`;
}

// Start from an empty database, so every run tells the same story.
for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
console.log(
  `AGBoss parallel approvals: three reviews at once, two wait for dana (SQLite store at ${path})\n`,
);

console.log("1. dana's request fans out to legal, finance and ops (at most two at a time)");
line("request", JSON.stringify(request));
const asking = await createApp(ReviewApplication, { store: sqliteStore({ path }) });
try {
  // Streamed, so the terminal shows each step while the run works; the result is what execute returns.
  const paused = await showProgress(
    asking.stream(
      ReviewWorkflowStart,
      { text: request },
      { threadId, ownerId: dana.ownerId, tenant: { tenantId: dana.tenantId }, record: true },
    ),
  );
  const answered = (paused.record?.steps ?? []).filter(
    (s) => s.type === "model" && s.calledTools.length === 0,
  );
  for (const step of answered) line("finished", `${step.step.agent.name} (it needs nobody)`);
  for (const pause of paused.pending)
    line("waiting", `${pause.agent}: ${pause.ask.tool} ${JSON.stringify(pause.ask.arguments)}`);
  line(
    "status",
    `${paused.status}: ${paused.pending.length} questions wait for dana (execution ${paused.executionId})`,
  );
} finally {
  await asking.close(); // nothing is held in memory: the questions rest in the SQLite file
}

console.log("\n2. Another app over the same file asks dana in the terminal (↑/↓, Enter; Ctrl-C to stop)");
const answering = await createApp(ReviewApplication, { store: sqliteStore({ path }) });
try {
  const session = await answerInTerminal(answering, { ...dana, record: true });
  if (session.end !== TerminalSessionEnd.NoneOpen) {
    console.log("\nThe questions still wait in the store; run the example again to start over.");
    process.exitCode = session.end === TerminalSessionEnd.Interrupted ? 130 : 0;
  } else {
    const last = session.answers.at(-1)?.result;
    console.log("\n3. Both answered: the join ran and the summary agent read every branch");
    line("tools ran", answering.get(ReviewLedger).runs.join(", ") || "none");
    line("summary", (last?.output as { text?: string } | undefined)?.text ?? "");
    line("status", `${last?.status} (execution ${last?.executionId})`);
    console.log("\n4. The audit trail (result.record.pauses)");
    for (const entry of last?.record?.pauses ?? []) line("pause", auditLine(entry));
  }
} finally {
  await answering.close();
}
