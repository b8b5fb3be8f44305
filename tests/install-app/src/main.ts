// Runs the refund workflow to its pause, then answers the pause from a second app over the same
// SQLite file (as another process would), and prints what happened as one JSON line.
import { createApp } from "@agboss/core";
import { sqliteStore } from "@agboss/store-sqlite";
import { RefundApplication, RefundWorkflowStart, refunds } from "./refunds.js";

const path = process.argv[2];
if (path === undefined) throw new Error("usage: main.js <sqlite file>");

const first = await createApp(RefundApplication, { store: sqliteStore({ path }) });
const paused = await first.execute(
  RefundWorkflowStart,
  { text: "Refund order ord_1" },
  {
    threadId: "order:ord_1",
    ownerId: "customer-7",
  },
);
await first.close();
const pauseId = paused.pending[0]?.pauseId;
if (pauseId === undefined) throw new Error(`expected a pause, got ${paused.status}`);
const refundsWhilePaused = refunds.length;

const second = await createApp(RefundApplication, { store: sqliteStore({ path }) });
const resumed = await second.resume({ pauseId, decision: { approved: true } }, { ownerId: "customer-7" });
await second.close();

console.log(
  JSON.stringify({
    paused: paused.status,
    pending: paused.pending.length,
    refundsWhilePaused,
    resumed: resumed.status,
    output: resumed.output,
    refunds,
  }),
);
