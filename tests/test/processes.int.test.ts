import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ExecutionStatus } from "@agboss/core";
import { postgresBackend, sqliteFile } from "@agboss/core-behaviour/backends";
import { OfficeApplication } from "@agboss/core-behaviour/fixtures/approval-app";
import { pauseTwo } from "@agboss/core-behaviour/office";
import { sqliteStore } from "@agboss/store-sqlite";
import { testWith } from "@agboss/testing";
import { expect } from "vitest";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const worker = join(here, "..", "src", "resume-worker.ts");

async function resumeInProcess(
  target: string,
  pauseId: string,
  credential: "ownerId" | "answeredBy",
  who: string,
) {
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "--conditions=@agboss/source", worker, target, pauseId, credential, who],
    {
      cwd: join(here, ".."),
      timeout: 60_000,
    },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1) as string) as {
    status: string;
    pending: number;
    refunds: number;
    expenses: number;
  };
}

const path = sqliteFile();
const test = testWith(OfficeApplication, { store: () => sqliteStore({ path }) });

test("[HW-03] [CC-06] two real processes over one SQLite file answer two pauses of one tree at once: both taken, each tool once", async ({
  app,
  mockLlm,
  store,
}) => {
  const { refundPauseId, expensePauseId, result } = await pauseTwo(app, mockLlm, "t-processes");
  expect(result.status).toBe(ExecutionStatus.Paused);
  const [a, b] = await Promise.all([
    resumeInProcess(path, refundPauseId, "answeredBy", "manager-17"),
    resumeInProcess(path, expensePauseId, "ownerId", "alice"),
  ]);
  expect([a.status, b.status]).toContain(ExecutionStatus.Completed);
  expect(a.refunds + b.refunds).toBe(1);
  expect(a.expenses + b.expenses).toBe(1);
  const record = await store.executions.findByTenantIdAndExecutionId("acme", result.executionId);
  expect(record?.status).toBe(ExecutionStatus.Completed);
  const pauses = await store.pauses.list({ tenantId: "acme", threadId: "t-processes" });
  expect(pauses.map((p) => p.status)).toEqual(["taken", "taken"]);
}, 90_000);

const onPostgres = testWith(OfficeApplication, { store: postgresBackend.store });

onPostgres(
  "[HW-03] [CC-06] two real processes over one Postgres schema answer two pauses of one tree at once: both taken, each tool once",
  async ({ app, mockLlm, store }) => {
    const schema = store.name.slice(store.name.lastIndexOf("#") + 1);
    const { refundPauseId, expensePauseId, result } = await pauseTwo(app, mockLlm, "t-processes-pg");
    expect(result.status).toBe(ExecutionStatus.Paused);
    const [a, b] = await Promise.all([
      resumeInProcess(`postgres:${schema}`, refundPauseId, "answeredBy", "manager-17"),
      resumeInProcess(`postgres:${schema}`, expensePauseId, "ownerId", "alice"),
    ]);
    expect([a.status, b.status]).toContain(ExecutionStatus.Completed);
    expect(a.refunds + b.refunds).toBe(1);
    expect(a.expenses + b.expenses).toBe(1);
    const record = await store.executions.findByTenantIdAndExecutionId("acme", result.executionId);
    expect(record?.status).toBe(ExecutionStatus.Completed);
    const pauses = await store.pauses.list({ tenantId: "acme", threadId: "t-processes-pg" });
    expect(pauses.map((p) => p.status)).toEqual(["taken", "taken"]);
  },
  90_000,
);
