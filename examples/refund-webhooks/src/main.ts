import { fileURLToPath } from "node:url";
import { startRefundServer } from "./server.js";
import { storeChoiceFromEnv } from "./store.js";

// The store: Postgres when AGBOSS_POSTGRES_URL is set (schema AGBOSS_POSTGRES_SCHEMA, default
// refund_webhooks); else SQLite at AGBOSS_SQLITE_PATH, else a gitignored file beside the example.
const store = storeChoiceFromEnv(
  process.env,
  fileURLToPath(new URL("../.agboss/data/refund-webhooks.sqlite", import.meta.url)),
);
const port = Number(process.env.PORT ?? "3000");
const host = process.env.HOST ?? "127.0.0.1";

const server = await startRefundServer({ store, port, host });

console.log(`AGBoss refund desk listening on ${server.url}`);
console.log(`  store     ${server.store}`);
console.log(
  `  models    ${server.models === "scripted" ? "scripted (no network; set AGBOSS_OPENAI_API_KEY for a real endpoint)" : "OpenAI-compatible endpoint"}`,
);
console.log(`  POST ${server.url}/starts/refund-desk-workflow-start`);
console.log(`  POST ${server.url}/pauses/{pauseId}/answer`);
console.log(`  GET  ${server.url}/pauses`);
console.log(`  POST ${server.url}/threads/{threadId}/cancel`);
console.log(`  GET  ${server.url}/executions/{executionId}`);
console.log(`  GET  ${server.url}/threads/{threadId}/events (follow a run, server-sent events)`);
console.log(`  GET  ${server.url}/openapi.json`);
console.log(`  GET  ${server.url}/outbox`);
console.log(`  GET  ${server.url}/refunds`);

function shutdown(signal: string): void {
  console.log(`${signal}: closing`);
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
process.once("SIGINT", () => shutdown("SIGINT"));
process.once("SIGTERM", () => shutdown("SIGTERM"));
