import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { answerInTerminal, showProgress, TerminalSessionEnd } from "@agboss/channel-terminal";
import { createApp, type PauseEntry, PauseResolution } from "@agboss/core";
import { SQLITE_PATH_ENV, sqliteStore } from "@agboss/store-sqlite";
import { ReleaseApplication, ReleaseWorkflowStart } from "./index.js";

// The example's database: AGBOSS_SQLITE_PATH if set, else a gitignored file beside the example.
const path =
  process.env[SQLITE_PATH_ENV] ?? fileURLToPath(new URL("../../.agboss/data/quorum.sqlite", import.meta.url));
const dana = { ownerId: "dana", tenantId: "acme" };
const threadId = "release:2.4.0";

function line(label: string, text: string): void {
  console.log(`  ${label.padEnd(9)} ${text}`);
}

function auditLine(entry: PauseEntry): string {
  const reviewer = entry.step.agent.name.replace(/-reviewer-agent$/, "");
  const decision = entry.decision as { approved?: boolean } | undefined;
  const what =
    entry.resolution === PauseResolution.Withdrawn
      ? "withdrawn before anyone answered"
      : `${decision?.approved === true ? "approved" : "rejected"} by ${entry.responder ?? "nobody"}`;
  return `${reviewer}: ${what} (${entry.resolution})`;
}

// Start from an empty database, so every run tells the same story.
for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
console.log(`AGBoss quorum: two of three reviewers sign a release off (SQLite store at ${path})\n`);

console.log("1. Three reviewers look at release 2.4.0 at once; each asks dana to sign off");
const asking = await createApp(ReleaseApplication, { store: sqliteStore({ path }) });
try {
  // Streamed, so the terminal shows each step while the run works; the result is what execute returns.
  const paused = await showProgress(
    asking.stream(
      ReleaseWorkflowStart,
      { text: "release 2.4.0" },
      { threadId, ownerId: dana.ownerId, tenant: { tenantId: dana.tenantId } },
    ),
  );
  line("status", `${paused.status}: ${paused.pending.length} sign-offs wait for dana; two of them decide`);
} finally {
  await asking.close(); // the questions rest in the SQLite file
}

console.log("\n2. dana answers in the terminal (↑/↓, Enter; Ctrl-C to stop)");
const answering = await createApp(ReleaseApplication, { store: sqliteStore({ path }) });
try {
  const session = await answerInTerminal(answering, { ...dana, record: true });
  if (session.end !== TerminalSessionEnd.NoneOpen) {
    console.log("\nThe sign-offs still wait in the store; run the example again to start over.");
    process.exitCode = session.end === TerminalSessionEnd.Interrupted ? 130 : 0;
  } else {
    const last = session.answers.at(-1)?.result;
    console.log("\n3. The quorum was decided: the question left open was taken back");
    line("output", JSON.stringify(last?.output));
    line("status", `${last?.status} (execution ${last?.executionId})`);
    console.log("\n4. The audit trail (result.record.pauses)");
    for (const entry of last?.record?.pauses ?? []) line("pause", auditLine(entry));
  }
} finally {
  await answering.close();
}
