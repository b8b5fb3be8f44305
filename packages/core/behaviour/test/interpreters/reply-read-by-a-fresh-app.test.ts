import {
  callTool,
  createApp,
  ExecutionStatus,
  MemoryLogger,
  replyWith,
  ScriptedChatModel,
} from "@agboss/core";
import { appInternals } from "@agboss/core/internal";
import { sqliteStore } from "@agboss/store-sqlite";
import { expect, test } from "vitest";
import { sqliteFile } from "../../src/backends.js";
import { Desk } from "../../src/fixtures/approval-app.js";
import { DeskApplication, DeskWorkflowStart, WordyRefundTool } from "../../src/fixtures/interpreter-app.js";

async function open(path: string, turns: ReturnType<typeof replyWith>[]) {
  const app = await createApp(DeskApplication, {
    store: sqliteStore({ path }),
    modelsScripted: true,
    logger: new MemoryLogger(),
  });
  appInternals(app).models.setFallback(() => new ScriptedChatModel(turns));
  return app;
}

test("a reply is read and taken by a fresh createApp on its own connection to the same SQLite file", async () => {
  const path = sqliteFile();
  const first = await open(path, [callTool(WordyRefundTool, { orderId: "ord_7", amountCents: 700 })]);
  const paused = await first.execute(
    DeskWorkflowStart,
    { text: "refund ord_7" },
    { threadId: "t-durable", ownerId: "alice", tenant: { tenantId: "acme" } },
  );
  expect(paused.status).toBe(ExecutionStatus.Paused);
  const pauseId = first.get(Desk).asked.at(-1)?.pauseId as string;
  await first.close();

  const second = await open(path, [replyWith("Refund handled")]);
  const vague = await second
    .resume({ pauseId, reply: "maybe later" }, { tenantId: "acme", answeredBy: "manager-17" })
    .catch((e: unknown) => e);
  expect((vague as Error).name).toBe("UninterpretableReplyError");
  const done = await second.resume(
    { pauseId, reply: "lgtm" },
    { tenantId: "acme", answeredBy: "manager-17", record: true },
  );
  expect(done).toMatchObject({
    status: ExecutionStatus.Completed,
    executionId: paused.executionId,
    output: { text: "Refund handled" },
  });
  expect(second.get(Desk).refunds).toEqual([{ orderId: "ord_7", amountCents: 700 }]);
  expect(done.record?.pauses[0]).toMatchObject({
    responder: "manager-17",
    resolution: "replied",
    decision: { approved: true },
  });
  await second.close();
});
