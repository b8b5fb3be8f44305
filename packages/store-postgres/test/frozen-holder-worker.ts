import { PostgresStore } from "../src/index.js";

// A store in a process of its own that opens a write transaction on a lease row and stays in it: the
// test freezes this process (SIGSTOP) there. Arguments: url, schema, application name, lease key,
// the lease's epoch, idleInTransactionTimeoutMs.

const [url, schema, appName, key, epoch, idleInTransactionTimeoutMs] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const store = await PostgresStore.open({
  connectionString: url,
  schema,
  appName,
  idleInTransactionTimeoutMs: Number(idleInTransactionTimeoutMs),
  retry: { attempts: 1 },
});
await store.atomically(async () => {
  // A fenced renewal: an update of the lease row, whose lock the transaction now holds.
  const renewed = await store.leases.renew({
    fence: { key, epoch: Number(epoch) },
    now: Date.now(),
    ttlMs: 60_000,
  });
  process.stdout.write(`holding ${renewed}\n`);
  await new Promise(() => {});
});
