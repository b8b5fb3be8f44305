import Database from "better-sqlite3";
import { createApp, ExecutionStatus } from "@agboss/core";
import { sqliteStore } from "@agboss/store-sqlite";
import { ApprovalApplication, ManagerInbox, MANAGER, REFUND_REQUEST, RefundStart } from "./approval-app.js";
const path = "/tmp/zz/dump.sqlite";
for (const f of [path, path + "-wal", path + "-shm"]) try { (await import("node:fs")).rmSync(f); } catch {}
const app = await createApp(ApprovalApplication, { store: sqliteStore({ path }) });
const inbox = app.get(ManagerInbox);
const paused = await app.execute(RefundStart, { text: REFUND_REQUEST }, { threadId: "t1", ownerId: "c", tenant: { tenantId: "bt" } });
const db0 = new Database(path, { readonly: true });
console.log("AFTER PAUSE");
for (const r of db0.prepare("select length(record) as n, record from agboss_executions").all() as any[]) console.log("exec record", r.n, r.record.slice(0, 1500));
for (const r of db0.prepare("select length(ask) a, length(step) s, ask, step from agboss_pauses").all() as any[]) console.log("pause ask", r.a, "step", r.s, "\nASK", r.ask, "\nSTEP", r.step);
const pauseId = inbox.take("bt/t1");
const done = await app.resume({ pauseId, decision: { approved: true } }, { tenantId: "bt", answeredBy: MANAGER });
console.log(done.status);
for (const r of db0.prepare("select length(record) as n, record from agboss_executions").all() as any[]) console.log("exec record", r.n, r.record.slice(0, 3000));
for (const r of db0.prepare("select length(answer) an, length(tool_result) tr, answer, tool_result from agboss_pauses").all() as any[]) console.log("pause", r);
await app.close();
