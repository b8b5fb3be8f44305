import { fileURLToPath } from "node:url";
import { SQLITE_PATH_ENV } from "@agboss/store-sqlite";
import { serveInbox } from "./inbox-server.js";

// The example's database: AGBOSS_SQLITE_PATH if set, else a gitignored file beside the example.
const path =
  process.env[SQLITE_PATH_ENV] ?? fileURLToPath(new URL("../../.agboss/data/inbox.sqlite", import.meta.url));
const port = Number(process.env.PORT ?? 3000);
// --join: a second instance over the same file, without starting over.
const fresh = !process.argv.includes("--join");

const server = await serveInbox({ path, port, fresh });
console.log(`AGBoss inbox (SQLite store at ${path})`);
if (fresh)
  console.log("dana asked for a refund and an expense, reported a damaged return, and started a release.");
console.log(`\nOpen ${server.url}/sign-in/dana to answer as dana.`);
console.log(
  `A second instance over the same file: PORT=${port + 1} npx pnpm@12.4.2 --filter @agboss/example-flow-patterns inbox -- --join`,
);
console.log("Ctrl-C stops the server; the questions keep waiting in the file.");

const stop = () => void server.close().then(() => process.exit(0));
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
