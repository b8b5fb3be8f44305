import type { App } from "@agboss/core";
import {
  callTool,
  DtoValidationError,
  ExecutionStatus,
  PauseStatus,
  ReplyInterpretation,
  ReplyInterpreterMissingError,
  replyWith,
  ToolCallApprovalDecisionDto,
  UninterpretableReplyError,
  UnknownPauseError,
} from "@agboss/core";
import type { ModelScript } from "@agboss/testing";
import { TestSetupError } from "@agboss/testing";
import { expect } from "vitest";
import { frozen, onEachBackend } from "../../src/backends.js";
import { Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import {
  DeskAgent,
  DeskApplication,
  DeskWorkflowStart,
  ExpenseReplyInterpreter,
  interpreterFrames,
  RefundReplyInterpreter,
  WordyExpenseTool,
  WordyRefundTool,
} from "../../src/fixtures/interpreter-app.js";
import { acme, pauseRefund } from "../../src/office.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

function script(
  mockLlm: (c: typeof DeskAgent) => ModelScript,
  text: string,
  ...turns: Parameters<ModelScript["thenReturn"]>
) {
  mockLlm(DeskAgent)
    .when((r) => r.messages.find((m) => m.role === "user")?.content === text)
    .thenReturn(...turns);
}

async function askRefund(
  app: App,
  mockLlm: (c: typeof DeskAgent) => ModelScript,
  threadId: string,
  amountCents = 1000,
) {
  const text = `refund on ${threadId}`;
  script(
    mockLlm,
    text,
    callTool(WordyRefundTool, { orderId: "ord_1", amountCents }),
    replyWith("Refund handled"),
  );
  const result = await app.execute(DeskWorkflowStart, { text }, { threadId, ownerId: "alice", tenant: acme });
  return { result, pauseId: app.get(Desk).asked.at(-1)?.pauseId as string, threadKey: `acme/${threadId}` };
}

async function askExpense(app: App, mockLlm: (c: typeof DeskAgent) => ModelScript, threadId: string) {
  const text = `book on ${threadId}`;
  script(
    mockLlm,
    text,
    callTool(WordyExpenseTool, { purpose: "team lunch", amountCents: 4200 }),
    replyWith("Expense handled"),
  );
  const result = await app.execute(DeskWorkflowStart, { text }, { threadId, ownerId: "alice", tenant: acme });
  return { result, pauseId: result.pending[0]?.pauseId as string, threadKey: `acme/${threadId}` };
}

onEachBackend(DeskApplication, (test) => {
  test("[RP-01] a reply is read by the role's interpreter and answers like the decision it yields", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { pauseId, result } = await askRefund(app, mockLlm, "t-rp1");
    const other = await openApp();
    const resumed = await other.resume({ pauseId, reply: "  LGTM " }, manager);
    expect(resumed).toMatchObject({
      status: ExecutionStatus.Completed,
      executionId: result.executionId,
      output: { text: "Refund handled" },
    });
    expect(other.get(Desk).refunds).toEqual([{ orderId: "ord_1", amountCents: 1000 }]);
    const rejected = await askRefund(app, mockLlm, "t-rp1-reject");
    await other.resume({ pauseId: rejected.pauseId, reply: "reject: already refunded by hand" }, manager);
    const last = mockLlm(DeskAgent).calls.at(-1)?.messages.at(-1);
    expect(last?.content).toBe("Tool error: the call was rejected by manager-17: already refunded by hand");
  });

  test("[RP-02] exactly one of decision or reply, checked before the pause is looked up; the credential is checked as for a decision", async ({
    app,
    mockLlm,
    store,
  }) => {
    for (const request of [
      { pauseId: "unknown", reply: "ok", decision: { approved: true } },
      { pauseId: "unknown", reply: "" },
    ]) {
      await expect(app.resume(request as never, manager)).rejects.toBeInstanceOf(DtoValidationError);
    }
    await expect(app.resume({ pauseId: "unknown", reply: "ok" }, manager)).rejects.toBeInstanceOf(
      UnknownPauseError,
    );
    const { pauseId, threadKey } = await askRefund(app, mockLlm, "t-rp2");
    const before = await frozen(store, "acme", pauseId, threadKey);
    await expect(
      app.resume({ pauseId, reply: "lgtm" }, { tenantId: "acme", ownerId: "alice" }),
    ).rejects.toMatchObject({ code: "pause.wrong-answerer" });
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
  });

  test("[RP-03] the interpreter gets { ask, reply } with the arguments; its answer is validated, overrideArguments against the tool's input", async ({
    app,
    mockLlm,
    store,
  }) => {
    interpreterFrames.length = 0;
    const { pauseId, threadKey } = await askRefund(app, mockLlm, "t-rp3", 3000);
    const before = await frozen(store, "acme", pauseId, threadKey);
    const error = (await app
      .resume({ pauseId, reply: "zero" }, manager)
      .catch((e: unknown) => e)) as UninterpretableReplyError;
    expect(error).toBeInstanceOf(UninterpretableReplyError);
    expect(error.cause).toBeInstanceOf(DtoValidationError);
    expect(error.reason).toContain("overrideArguments of refund-card-tool");
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    expect(interpreterFrames.at(-1)).toMatchObject({
      ask: {
        tool: "refund-card-tool",
        agent: "desk-agent",
        arguments: { orderId: "ord_1", amountCents: 3000 },
      },
    });
    await app.resume({ pauseId, reply: "half" }, manager);
    expect(app.get(Desk).refunds).toEqual([{ orderId: "ord_1", amountCents: 1500 }]);
  });

  test("[RP-04] a model interpreter answers through one answer tool of the decision DTO, its prompt as instructions, ### ask and ### reply in the input", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const interpreter = mockLlm(ExpenseReplyInterpreter);
    interpreter
      .when({ reply: "sure, book it" })
      .thenReturn(replyWith(ToolCallApprovalDecisionDto, { approved: true }));
    const { pauseId } = await askExpense(app, mockLlm, "t-rp4");
    const other = await openApp();
    const done = await other.resume(
      { pauseId, reply: "sure, book it" },
      { tenantId: "acme", ownerId: "alice" },
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    const request = interpreter.calls[0];
    expect(request?.tools.map((t) => t.name)).toEqual(["submit_answer"]);
    expect(request?.tools[0]?.parameters).toMatchObject({
      type: "object",
      properties: { approved: { type: "boolean" } },
      required: ["approved"],
    });
    expect(request?.toolChoice).toBe("required");
    expect(request?.messages[0]).toEqual({
      role: "system",
      content: "The owner answered an expense question in their own words. Decide whether they approve.",
    });
    const input = request?.messages[1]?.content ?? "";
    expect(input.startsWith("### ask\n")).toBe(true);
    expect(input).toContain('"purpose": "team lunch"');
    expect(input.endsWith("### reply\nsure, book it")).toBe(true);
    expect(request?.caller).toBe("reply-interpreter:expense-reply-interpreter");
    expect(other.get(Desk).expenses).toHaveLength(1);
  });

  test("[RP-08] a code interpreter returns ReplyInterpretation sync or async and gets deps from the container (its types: reply-interpreters.test-d.ts)", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    const sync = await askRefund(app, mockLlm, "t-rp8-sync");
    const syncDone = await app.resume({ pauseId: sync.pauseId, reply: "approve" }, manager);
    expect(syncDone.status).toBe(ExecutionStatus.Completed);
    expect(interpreterFrames.at(-1)).toMatchObject({ tenantId: "acme", threadId: "t-rp8-sync" });
    const { pauseId } = await askRefund(app, mockLlm, "t-rp8");
    const interpreter = mockOf(RefundReplyInterpreter);
    // The fixture's interpret is sync; an async one is declared by ReplyInterpreterHandler too.
    interpreter.interpret.mockImplementationOnce(
      () => Promise.resolve(ReplyInterpretation.understood({ approved: true })) as never,
    );
    const done = await app.resume({ pauseId, reply: "anything at all" }, manager);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(interpreter.interpret).toHaveBeenCalledTimes(1);
  });

  test("[RP-09] the interpreter runs in the pause's execution frame: tenant, owner, execution and the waiting step", async ({
    app,
    openApp,
    mockLlm,
    store,
  }) => {
    interpreterFrames.length = 0;
    const { pauseId, result } = await askRefund(app, mockLlm, "t-rp9");
    const pause = await store.pauses.findByTenantIdAndPauseId("acme", pauseId);
    const other = await openApp();
    await other.resume({ pauseId, reply: "approve" }, manager);
    expect(interpreterFrames.at(-1)).toMatchObject({
      tenantId: "acme",
      ownerId: "alice",
      executionId: result.executionId,
      threadId: "t-rp9",
      step: {
        nodeId: "agent/desk-agent",
        agent: "desk-agent",
        callId: (pause?.ask as { callId: string } | undefined)?.callId,
        idempotencyKey: pause?.idempotencyKey,
      },
    });
  });

  test("[RP-10] an unreadable reply is UninterpretableReplyError with a reason (and cause), the pause stays Pending and can be answered again", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await askRefund(app, mockLlm, "t-rp10");
    const before = await frozen(store, "acme", pauseId, threadKey);
    const vague = (await app
      .resume({ pauseId, reply: "hmm, maybe?" }, manager)
      .catch((e: unknown) => e)) as UninterpretableReplyError;
    expect(vague).toBeInstanceOf(UninterpretableReplyError);
    expect(vague.code).toBe("pause.uninterpretable-reply");
    expect(vague.reason).toBe("Answer 'approve', 'lgtm' or 'reject: <reason>'.");
    expect(vague.cause).toBeUndefined();
    const crash = (await app
      .resume({ pauseId, reply: "crash" }, manager)
      .catch((e: unknown) => e)) as UninterpretableReplyError;
    expect(crash.reason).toBe("the reply parser crashed");
    expect((crash.cause as Error).message).toBe("the reply parser crashed");
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);

    const expense = await askExpense(app, mockLlm, "t-rp10-model");
    const model = mockLlm(ExpenseReplyInterpreter);
    model.when({ reply: "silent" }).thenReturn(replyWith("I think they approve"));
    model
      .when({ reply: "garbled" })
      .thenReturn(replyWith(ToolCallApprovalDecisionDto, { approved: "maybe" } as never));
    const owner = { tenantId: "acme", ownerId: "alice" };
    await expect(app.resume({ pauseId: expense.pauseId, reply: "silent" }, owner)).rejects.toMatchObject({
      reason: "the interpreter's model gave no answer.",
    });
    await expect(app.resume({ pauseId: expense.pauseId, reply: "garbled" }, owner)).rejects.toBeInstanceOf(
      UninterpretableReplyError,
    );
    expect((await store.pauses.findByTenantIdAndPauseId("acme", expense.pauseId))?.status).toBe(
      PauseStatus.Pending,
    );

    expect((await app.resume({ pauseId, reply: "lgtm" }, manager)).status).toBe(ExecutionStatus.Completed);
    expect(
      (await app.resume({ pauseId: expense.pauseId, decision: { approved: false } }, owner)).status,
    ).toBe(ExecutionStatus.Completed);
  });

  test("[TK-05] mockLlm(Interpreter).when({ reply }) scripts a model interpreter, mockOf(CodeInterpreter).interpret replaces a code one, mockLlm of a code interpreter is a setup error", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    expect(() => mockLlm(RefundReplyInterpreter)).toThrow(TestSetupError);
    expect(() => mockLlm(RefundReplyInterpreter)).toThrow(/decided by code/);
    mockOf(RefundReplyInterpreter).interpret.mockReturnValue(
      ReplyInterpretation.understood({ approved: false, reason: "scripted" }) as never,
    );
    const refund = await askRefund(app, mockLlm, "t-tk5");
    await app.resume({ pauseId: refund.pauseId, reply: "approve" }, manager);
    expect(app.get(Desk).refunds).toEqual([]);
    mockLlm(ExpenseReplyInterpreter)
      .when({ reply: /book/ })
      .thenReturn(replyWith(ToolCallApprovalDecisionDto, { approved: true }));
    const expense = await askExpense(app, mockLlm, "t-tk5-model");
    await app.resume(
      { pauseId: expense.pauseId, reply: "yes please book it" },
      { tenantId: "acme", ownerId: "alice" },
    );
    expect(app.get(Desk).expenses).toHaveLength(1);
  });
});

onEachBackend(OfficeApplication, (test) => {
  test("[RP-11] a reply for a role without replyInterpreter is ReplyInterpreterMissingError and the pause is untouched", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-rp11");
    const before = await frozen(store, "acme", pauseId, threadKey);
    const error = await app.resume({ pauseId, reply: "ok, go ahead" }, manager).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplyInterpreterMissingError);
    expect((error as ReplyInterpreterMissingError).code).toBe("pause.no-reply-interpreter");
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
  });
});
