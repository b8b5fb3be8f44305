import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { createApp } from "@agboss/core";
import { sqliteStore } from "@agboss/store-sqlite";
import { ApprovalApplication, ManagerInbox, MANAGER, REFUND_REQUEST, RefundStart } from "./approval-app.js";
const path = "/tmp/zz/count.sqlite";
for (const f of [path, path + "-wal", path + "-shm"]) try { (await import("node:fs")).rmSync(f); } catch {}
const app = await createApp(ApprovalApplication, { store: sqliteStore({ path }) });
const inbox = app.get(ManagerInbox);
const orig = AsyncLocalStorageProviderSingleton.runWithConfig.bind(AsyncLocalStorageProviderSingleton);
const counts = new Map<string, number>();
let on = false;
(AsyncLocalStorageProviderSingleton as any).runWithConfig = (config: any, cb: any, avoid: any) => {
  if (on) {
    const st = (new Error().stack ?? "").split("\n").slice(2, 5).map((l) => l.trim().replace(/\(.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "(").replace(/\(\/work\/main\//, "(")).join(" | ");
    const k = `${config?.runName ?? ""} ${avoid ? "[avoid]" : ""} ${st}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return orig(config, cb, avoid);
};
async function once(i: number) {
  await app.execute(RefundStart, { text: REFUND_REQUEST }, { threadId: `t${i}`, ownerId: "c", tenant: { tenantId: "bt" } });
  const pauseId = inbox.take(`bt/t${i}`);
  await app.resume({ pauseId, decision: { approved: true } }, { tenantId: "bt", answeredBy: MANAGER });
}
await once(0);
on = true;
for (let i = 1; i <= 10; i++) await once(i);
on = false;
let total = 0;
for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1])) { total += v; console.log((v / 10).toFixed(1), k); }
console.log("total per round trip", total / 10);
await app.close();
