// A separate process whose SQLite store checkpoints its log on a background thread, copying often:
//   wal-checkpoint-worker.ts <path> close   writes 200 rows, closes the store, prints "closed"
//   wal-checkpoint-worker.ts <path> write   prints "ready", then "ack <n>" after each row it commits,
//                                           until it is killed
import { setTimeout as sleep } from "node:timers/promises";
import { SqliteStore, SqliteWalCheckpoints } from "@agboss/store-sqlite";
import { sql } from "kysely";

const [path, mode] = process.argv.slice(2);
if (path === undefined || (mode !== "close" && mode !== "write"))
  throw new Error("usage: wal-checkpoint-worker <path> close|write");

const store = await SqliteStore.open({
  path,
  walCheckpointTiming: { startAfterMs: 0, intervalMs: 5, restartPages: 64 },
});
for (let waited = 0; store.walCheckpoints !== SqliteWalCheckpoints.Background; waited += 5) {
  if (waited > 20_000)
    throw new Error(
      `the checkpoint thread did not come up: ${store.walCheckpointFailure ?? "no reason given"}`,
    );
  await sleep(5);
}
await sql`create table if not exists filler (id integer primary key, value blob not null)`.execute(store.db);
const page = (n: number) => Buffer.alloc(4096, n % 251);

if (mode === "close") {
  for (let n = 0; n < 200; n += 1) await sql`insert into filler values (${n}, ${page(n)})`.execute(store.db);
  // Nothing else holds the process open from here: it ends once the close has returned, or before.
  await store.close();
  process.stdout.write("closed\n");
} else {
  process.stdout.write("ready\n");
  for (let n = 0; ; n += 1) {
    await sql`insert into filler values (${n}, ${page(n)})`.execute(store.db);
    process.stdout.write(`ack ${n}\n`);
  }
}
