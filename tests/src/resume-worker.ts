// A separate process that answers one pause:
//   resume-worker.ts <sqlite path | postgres:<schema>> <pauseId> <ownerId|answeredBy> <who>
// (Postgres: the server of AGBOSS_POSTGRES_URL, else the local `test` database.) It prints one JSON line
// with what it saw and what its tools did.
import { createApp, MemoryLogger, replyWith, ScriptedChatModel } from "@agboss/core";
import { appInternals } from "@agboss/core/internal";
import { Desk, OfficeApplication } from "@agboss/core-behaviour/fixtures/approval-app";
import { postgresStore } from "@agboss/store-postgres";
import { sqliteStore } from "@agboss/store-sqlite";

const [target, pauseId, credential, who] = process.argv.slice(2);
if (target === undefined || pauseId === undefined || who === undefined)
  throw new Error(
    "usage: resume-worker <sqlite path | postgres:<schema>> <pauseId> <ownerId|answeredBy> <who>",
  );
const store = target.startsWith("postgres:")
  ? postgresStore({
      connectionString: process.env.AGBOSS_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/test",
      schema: target.slice("postgres:".length),
    })
  : sqliteStore({ path: target });
const app = await createApp(OfficeApplication, {
  store,
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
