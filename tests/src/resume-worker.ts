// A separate process that answers one pause: `resume-worker.ts <sqlite path> <pauseId> <ownerId|answeredBy> <who>`.
// It prints one JSON line with what it saw and what its tools did.
import { appInternals, createApp, MemoryLogger, replyWith, ScriptedChatModel } from "@agboss/core";
import { sqliteStore } from "@agboss/store-sqlite";
import { Desk, OfficeApplication } from "./fixtures/approval-app.js";

const [path, pauseId, credential, who] = process.argv.slice(2);
if (path === undefined || pauseId === undefined || who === undefined)
  throw new Error("usage: resume-worker <path> <pauseId> <ownerId|answeredBy> <who>");
const app = await createApp(OfficeApplication, {
  store: sqliteStore({ path }),
  modelsScripted: true,
  logger: new MemoryLogger(),
});
appInternals(app).models.setFallback(() => new ScriptedChatModel([replyWith("Both done")], { loop: true }));
const options =
  credential === "ownerId" ? { tenantId: "acme", ownerId: who } : { tenantId: "acme", answeredBy: who };
const result = await app.resume({ pauseId, decision: { approved: true } }, options);
const desk = app.get(Desk);
console.log(
  JSON.stringify({
    status: result.status,
    pending: result.pending.length,
    refunds: desk.refunds.length,
    expenses: desk.expenses.length,
  }),
);
await app.close();
