import {
  AgbossError,
  AgentFailedError,
  Application,
  callTool,
  createApp,
  DtoValidationError,
  ExecutionCancelledError,
  type ExecutionStartEvent,
  ExecutionStatus,
  memoryStore,
  replyWith,
  ScriptedChatModel,
  StepFailedError,
  ThreadOwnerError,
} from "@agboss/core";
import { afterEach, describe, expect, test } from "vitest";
import {
  RefundApplication,
  RefundCardTool,
  RefundLedger,
  RefundWorkflow,
  RefundWorkflowStart,
  ScriptedModelProvider,
  scriptedTurns,
} from "../../src/fixtures/refund-app.js";

afterEach(() => {
  scriptedTurns.length = 0;
});

const acme = { tenantId: "acme" };

describe("execute: bad input and follow-ups", () => {
  test("an invalid start DTO is a DtoValidationError naming each field, and nothing is stored", async () => {
    const store = await memoryStore()({
      appName: "t",
      clock: { now: () => 0, setTimer: () => ({ cancel() {} }) },
      logger: { log() {} },
    });
    const app = await createApp(RefundApplication, { store });
    const error = await app
      .execute(RefundWorkflowStart, { text: "", extra: 1 } as never, {
        threadId: "t-bad",
        ownerId: "u",
        tenant: acme,
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DtoValidationError);
    expect((error as DtoValidationError).issues.map((i) => i.path)).toEqual(["text"]);
    expect((error as Error).message).toContain("text: text must not be empty");
    expect(await store.threads.findByTenantIdAndThreadId("acme", "t-bad")).toBeUndefined();
    expect(await store.executions.listByTenantIdAndThreadId("acme", "t-bad")).toEqual([]);
    expect(await store.checkpointer.getTuple({ configurable: { thread_id: "acme/t-bad" } })).toBeUndefined();
    await app.close();
    await store.close();
  });

  test("a tenant id with a \"/\" is refused before anything runs: tenant a's thread b/c and tenant a/b's thread c would share one key", async () => {
    const app = await createApp(RefundApplication, { store: memoryStore() });
    scriptedTurns.push(replyWith("done"));
    const first = await app
      .execute(
        RefundWorkflowStart,
        { text: "Refund ord_1" },
        { threadId: "c", ownerId: "u", tenant: { tenantId: "a/b" } },
      )
      .catch((e: unknown) => e);
    expect(first).toBeInstanceOf(DtoValidationError);
    expect((first as DtoValidationError).issues).toEqual([
      { path: "tenant.tenantId", message: expect.stringContaining('must not contain "/"') },
    ]);
    const flat = await app
      .execute(
        RefundWorkflowStart,
        { text: "Refund ord_1" },
        { threadId: "c", ownerId: "u", tenantId: "a/b" },
      )
      .catch((e: unknown) => e);
    expect((flat as DtoValidationError).issues.map((issue) => issue.path)).toEqual(["tenantId"]);
    expect(await app.store.threads.findByTenantIdAndThreadId("a/b", "c")).toBeUndefined();
    expect(await app.store.checkpointer.getTuple({ configurable: { thread_id: "a/b/c" } })).toBeUndefined();
    // A "/" in the thread id is fine: the key splits at the tenant's end.
    const ok = await app.execute(
      RefundWorkflowStart,
      { text: "Refund ord_1" },
      { threadId: "b/c", ownerId: "u", tenant: { tenantId: "a" } },
    );
    expect(ok.status).toBe(ExecutionStatus.Completed);
    await app.close();
  });

  test("a tool input the model got wrong: the model reads the error and the loop goes on", async () => {
    const app = await createApp(RefundApplication, { store: memoryStore() });
    const model = new ScriptedChatModel([
      callTool(RefundCardTool, { orderId: "ord_2", amountCents: -5 }),
      callTool(RefundCardTool, { orderId: "ord_2", amountCents: 500 }),
      replyWith("Refunded ord_2 after fixing the amount"),
    ]);
    scriptedTurns.push(
      ...[0, 1, 2].map(() => (r: Parameters<ScriptedChatModel["invoke"]>[0]) => model.invoke(r)),
    );
    const result = await app.execute(
      RefundWorkflowStart,
      { text: "Refund ord_2" },
      { ownerId: "u", tenant: acme, record: true },
    );
    expect(result.output).toEqual({ text: "Refunded ord_2 after fixing the amount" });
    const second = model.requests[1]?.messages.at(-1);
    expect(second?.role).toBe("tool");
    expect(second?.content).toMatch(/^Tool error: invalid input for refund-card-tool: amountCents: /);
    expect(app.get(RefundLedger).refunds.map((r) => r.amountCents)).toEqual([500]);
    const tools = result.record?.steps.filter((s) => s.type === "tool") ?? [];
    expect(tools.map((s) => (s.type === "tool" ? s.error !== undefined : null))).toEqual([true, false]);
    await app.close();
  });

  test("[HW-02] a follow-up on the same threadId continues the conversation", async () => {
    const app = await createApp(RefundApplication, { store: memoryStore() });
    const model = new ScriptedChatModel([replyWith("Which order?"), replyWith("Refunded ord_3")]);
    scriptedTurns.push(
      ...[0, 1].map(() => (r: Parameters<ScriptedChatModel["invoke"]>[0]) => model.invoke(r)),
    );
    const options = { threadId: "chat:42", ownerId: "customer-7", tenant: acme };
    const first = await app.execute(RefundWorkflowStart, { text: "I want a refund" }, options);
    const second = await app.execute(RefundWorkflowStart, { text: "Order ord_3" }, options);
    expect(second.output).toEqual({ text: "Refunded ord_3" });
    expect(second.executionId).not.toBe(first.executionId);
    expect(model.requests[1]?.messages.map((m) => `${m.role}:${m.content}`)).toEqual([
      "system:Refund what the customer asks for, then say what you did.",
      "user:I want a refund",
      "assistant:Which order?",
      "user:Order ord_3",
    ]);
    const other = await app
      .execute(RefundWorkflowStart, { text: "hijack" }, { ...options, ownerId: "someone-else" })
      .catch((e: unknown) => e);
    expect(other).toBeInstanceOf(ThreadOwnerError);
    await app.close();
  });

  test("[HW-02] app.cancel(threadId) addresses the conversation and aborts its running pass", async () => {
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    scriptedTurns.push((request) => {
      started();
      return new Promise((_, reject) => {
        request.signal?.addEventListener("abort", () => reject(request.signal?.reason));
      });
    });
    const app = await createApp(RefundApplication, { store: memoryStore() });
    const pending = app.execute(
      RefundWorkflowStart,
      { text: "slow" },
      { threadId: "slow", ownerId: "u", tenant: acme },
    );
    await running;
    await app.cancel("slow", { tenantId: "acme" });
    await expect(pending).rejects.toBeInstanceOf(ExecutionCancelledError);
    const thread = await app.store.threads.findByTenantIdAndThreadId("acme", "slow");
    expect((await app.record(thread?.latestExecutionId ?? "", { tenantId: "acme" }))?.status).toBe(
      ExecutionStatus.Cancelled,
    );
    await app.close();
  });

  test("a model failure fails the agent's step with the model's error as cause", async () => {
    scriptedTurns.push(() => Promise.reject(new Error("provider down")));
    const app = await createApp(RefundApplication, { store: memoryStore() });
    const error = await app
      .execute(RefundWorkflowStart, { text: "x" }, { ownerId: "u" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentFailedError);
    expect(error).toBeInstanceOf(StepFailedError);
    expect(error).toBeInstanceOf(AgbossError);
    expect((error as Error).message).toContain(
      'Agent "refund-agent" failed: its model call failed: provider down',
    );
    expect(((error as Error).cause as Error).message).toBe("provider down");
    await app.close();
  });

  test("execution events reach the application's methods", async () => {
    const seen: string[] = [];
    @Application({
      name: "evented-application",
      workflows: [RefundWorkflow],
      providers: [RefundLedger, ScriptedModelProvider],
    })
    class EventedApplication {
      onExecutionStart(event: ExecutionStartEvent) {
        seen.push(`start:${JSON.stringify(event.input)}`);
      }
      onExecutionFinish() {
        seen.push("finish");
      }
      onExecutionError() {
        seen.push("error");
      }
    }
    const app = await createApp(EventedApplication, { store: memoryStore() });
    scriptedTurns.push(replyWith("done"));
    await app.execute(RefundWorkflowStart, { text: "hi" }, { ownerId: "u" });
    scriptedTurns.push(() => Promise.reject(new Error("boom")));
    await app.execute(RefundWorkflowStart, { text: "again" }, { ownerId: "u" }).catch(() => undefined);
    expect(seen).toEqual(['start:{"text":"hi"}', "finish", 'start:{"text":"again"}', "error"]);
    await app.close();
  });
});
