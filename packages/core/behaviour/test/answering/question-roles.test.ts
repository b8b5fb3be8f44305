import {
  Agent,
  AgentFailedError,
  type App,
  Application,
  AssemblyError,
  Channel,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  callTool,
  createApp,
  DecidedBy,
  DtoValidationError,
  ExecutionStatus,
  ModelProvider,
  type ModelProviderHandler,
  memoryStore,
  PauseAnswerer,
  PauseKind,
  PauseResolution,
  PauseStatus,
  ReplyInterpreter,
  replyWith,
  ScriptedChatModel,
  start,
  Tool,
  UninterpretableReplyError,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import type { ModelScript } from "@agboss/testing";
import { describe, expect, test as plainTest } from "vitest";
import { frozen, onEachBackend, onEachBackendAndPostgres } from "../../src/backends.js";
import { Desk, DoneDto } from "../../src/fixtures/approval-app.js";
import {
  DeskAgent,
  DeskApplication,
  DeskWorkflowStart,
  WordyRefundTool,
} from "../../src/fixtures/interpreter-app.js";
import {
  DisputeDto,
  PickupDto,
  PickupSlotDto,
  PickupSlotReplyInterpreter,
  ReturnsAgent,
  ReturnsApplication,
  ReturnsWorkflowStart,
  SchedulePickupTool,
  SettleDisputeTool,
  SettlementDesk,
  SettlementDto,
} from "../../src/fixtures/question-app.js";
import { acme } from "../../src/office.js";

const lead = { tenantId: "acme", answeredBy: "finance-lead-3" } as const;
const customer = { tenantId: "acme", ownerId: "alice" } as const;

async function askDispute(
  app: App,
  mockLlm: (c: typeof ReturnsAgent) => ModelScript,
  threadId: string,
  dispute: { orderId: string; claimedCents: number } = { orderId: "ord_7", claimedCents: 1300 },
) {
  const text = `dispute on ${threadId}`;
  mockLlm(ReturnsAgent)
    .when((r) => r.messages.find((m) => m.role === "user")?.content === text)
    .thenReturn(callTool(SettleDisputeTool, dispute), replyWith("Dispute settled"));
  const result = await app.execute(
    ReturnsWorkflowStart,
    { text },
    { threadId, ownerId: "alice", tenant: acme },
  );
  return {
    result,
    pauseId: app.get(SettlementDesk).asked.at(-1)?.pauseId as string,
    threadKey: `acme/${threadId}`,
  };
}

async function askPickup(app: App, mockLlm: (c: typeof ReturnsAgent) => ModelScript, threadId: string) {
  const text = `pickup on ${threadId}`;
  mockLlm(ReturnsAgent)
    .when((r) => r.messages.find((m) => m.role === "user")?.content === text)
    .thenReturn(callTool(SchedulePickupTool, { orderId: "ord_9" }), replyWith("Pickup booked"));
  const result = await app.execute(
    ReturnsWorkflowStart,
    { text },
    { threadId, ownerId: "alice", tenant: acme },
  );
  return { result, pauseId: result.pending[0]?.pauseId as string, threadKey: `acme/${threadId}` };
}

onEachBackendAndPostgres(ReturnsApplication, (test) => {
  test("a question role's pause is answered with { answer } on another instance: the tool's run gets its input and the validated answer", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { result, pauseId } = await askDispute(app, mockLlm, "t-q1");
    expect(result.status).toBe(ExecutionStatus.Paused);
    expect(result.pending).toEqual([
      expect.objectContaining({
        pauseId: undefined,
        kind: PauseKind.Question,
        channel: "dispute-settlement-channel",
        ask: expect.objectContaining({
          tool: "settle-dispute-tool",
          arguments: { orderId: "ord_7", claimedCents: 1300 },
        }),
      }),
    ]);
    expect(app.get(SettlementDesk).asked[0]?.ask.kind).toBe(PauseKind.Question);
    expect(app.get(SettlementDesk).asked[0]?.ask.value.arguments).toEqual({
      orderId: "ord_7",
      claimedCents: 1300,
    });
    const other = await openApp();
    const done = await other.resume({ pauseId, answer: { refundCents: 900, memo: "kept the box" } }, lead);
    expect(done).toMatchObject({ status: ExecutionStatus.Completed, output: { text: "Dispute settled" } });
    expect(other.get(SettlementDesk).settled).toEqual([
      { input: { orderId: "ord_7", claimedCents: 1300 }, answer: { refundCents: 900, memo: "kept the box" } },
    ]);
    expect(app.get(SettlementDesk).settled).toEqual([]);
    const toolMessage = mockLlm(ReturnsAgent).calls.at(-1)?.messages.at(-1);
    expect(toolMessage?.content).toBe(JSON.stringify({ status: "refunded 900 of 1300 on ord_7" }));
  });

  test("the wrong payload for a pause's kind, or an invalid answer, is DtoValidationError naming what to send; the pause and checkpoint stay as they were", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await askDispute(app, mockLlm, "t-q2");
    const before = await frozen(store, "acme", pauseId, threadKey);
    const asDecision = await app
      .resume({ pauseId, decision: { approved: true } }, lead)
      .catch((e: unknown) => e);
    expect(asDecision).toBeInstanceOf(DtoValidationError);
    expect((asDecision as Error).message).toContain(
      "answer it with { answer } (a SettlementDto), not a decision",
    );
    for (const answer of [
      { refundCents: -5 },
      { refundCents: 10.5 },
      {},
      { refundCents: 5, refundReason: "x" },
    ]) {
      await expect(app.resume({ pauseId, answer }, lead)).rejects.toBeInstanceOf(DtoValidationError);
    }
    await expect(
      app.resume({ pauseId, answer: { refundCents: 1 }, reply: "full" } as never, lead),
    ).rejects.toBeInstanceOf(DtoValidationError);
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    expect(app.get(SettlementDesk).settled).toEqual([]);
    const done = await app.resume({ pauseId, answer: { refundCents: 0 } }, lead);
    expect(done.status).toBe(ExecutionStatus.Completed);
  });

  test("a reply read by the role's code interpreter becomes the answer; an unreadable one leaves the pause waiting with the reason", async ({
    app,
    openApp,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await askDispute(app, mockLlm, "t-q3");
    const before = await frozen(store, "acme", pauseId, threadKey);
    const unreadable = await app.resume({ pauseId, reply: "maybe later" }, lead).catch((e: unknown) => e);
    expect(unreadable).toBeInstanceOf(UninterpretableReplyError);
    expect((unreadable as UninterpretableReplyError).reason).toContain("'full', 'half', 'none'");
    // A number the interpreter reads but the answer DTO refuses is unreadable too, not a half-recorded answer.
    const negative = await app.resume({ pauseId, reply: "-40" }, lead).catch((e: unknown) => e);
    expect(negative).toBeInstanceOf(UninterpretableReplyError);
    expect((negative as UninterpretableReplyError).reason).toContain("not a valid SettlementDto");
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    const other = await openApp();
    const done = await other.resume({ pauseId, reply: "half: customer kept one item" }, lead);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(other.get(SettlementDesk).settled[0]?.answer).toEqual({
      refundCents: 650,
      memo: "customer kept one item",
    });
  });

  test("a model interpreter of a question role answers through one answer tool of the role's answer DTO, with ### ask and ### reply", async ({
    app,
    openApp,
    mockLlm,
    store,
  }) => {
    const interpreter = mockLlm(PickupSlotReplyInterpreter);
    interpreter
      .when({ reply: "tuesday after lunch works" })
      .thenReturn(replyWith(PickupSlotDto, { day: "tuesday", window: "afternoon" }));
    interpreter
      .when({ reply: "on the weekend" })
      .thenReturn(replyWith(PickupSlotDto, { day: "saturday", window: "morning" } as never));
    const { pauseId, threadKey, result } = await askPickup(app, mockLlm, "t-q4");
    expect(result.pending[0]).toMatchObject({
      kind: PauseKind.Question,
      answeredBy: PauseAnswerer.ThreadOwner,
    });
    const before = await frozen(store, "acme", pauseId, threadKey);
    const weekend = await app.resume({ pauseId, reply: "on the weekend" }, customer).catch((e: unknown) => e);
    expect(weekend).toBeInstanceOf(UninterpretableReplyError);
    expect((weekend as UninterpretableReplyError).reason).toContain("not a valid PickupSlotDto");
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    const other = await openApp();
    const done = await other.resume({ pauseId, reply: "tuesday after lunch works" }, customer);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(other.get(SettlementDesk).pickups).toEqual([
      { input: { orderId: "ord_9" }, answer: { day: "tuesday", window: "afternoon" } },
    ]);
    const request = interpreter.calls.at(-1);
    expect(request?.tools.map((t) => t.name)).toEqual(["submit_answer"]);
    expect(request?.tools[0]?.parameters).toMatchObject({
      type: "object",
      properties: { day: { enum: ["monday", "tuesday", "wednesday", "thursday", "friday"] } },
      required: ["day", "window"],
    });
    expect(request?.toolChoice).toBe("required");
    expect(request?.messages[0]?.content).toBe(
      "The customer said when the parcel may be collected. Give the day and the window.",
    );
    const input = request?.messages[1]?.content ?? "";
    expect(input.startsWith("### ask\n")).toBe(true);
    expect(input).toContain('"orderId": "ord_9"');
    expect(input.endsWith("### reply\ntuesday after lunch works")).toBe(true);
  });

  test("a question role's channel may answer at once with ChannelOutcome.answered; decided(…) or an invalid answer fails the step", async ({
    app,
    mockLlm,
  }) => {
    const small = await askDispute(app, mockLlm, "t-q5", { orderId: "ord_small", claimedCents: 300 });
    expect(small.result.status).toBe(ExecutionStatus.Completed);
    expect(app.get(SettlementDesk).settled).toEqual([
      {
        input: { orderId: "ord_small", claimedCents: 300 },
        answer: { refundCents: 300, memo: "small claim" },
      },
    ]);
    const record = await app.record(small.result.executionId, { tenantId: "acme" });
    expect(record?.pauses[0]).toMatchObject({
      kind: PauseKind.Question,
      resolution: PauseResolution.Decided,
      answer: { refundCents: 300, memo: "***" },
    });
    expect(record?.pauses[0]?.decision).toBeUndefined();
    const decides = await askDispute(app, mockLlm, "t-q5-decides", {
      orderId: "ord_decides",
      claimedCents: 900,
    }).catch((e: unknown) => e);
    expect(decides).toBeInstanceOf(AgentFailedError);
    expect((decides as Error).message).toContain(
      'channel "dispute-settlement-channel" asks a question (its answer is a SettlementDto): answer at once with ChannelOutcome.answered(…), not decided(…)',
    );
    const negative = await askDispute(app, mockLlm, "t-q5-negative", {
      orderId: "ord_negative",
      claimedCents: 900,
    }).catch((e: unknown) => e);
    expect(negative).toBeInstanceOf(AgentFailedError);
    expect((negative as Error).message).toContain("answered with an invalid answer");
    expect((negative as Error).cause).toBeInstanceOf(DtoValidationError);
    expect(app.get(SettlementDesk).settled).toHaveLength(1);
  });

  test("the audit trail and the inbox say a pause is a question and mask the answer's sensitive fields", async ({
    app,
    mockLlm,
  }) => {
    const { pauseId, result } = await askDispute(app, mockLlm, "t-q6");
    const inbox = await app.pauses.list({ tenantId: "acme", status: PauseStatus.Pending });
    expect(inbox).toEqual([
      expect.objectContaining({
        pauseId: undefined,
        kind: PauseKind.Question,
        channel: "dispute-settlement-channel",
      }),
    ]);
    const done = await app.resume(
      { pauseId, answer: { refundCents: 1300, memo: "card 4111 1111 1111 1111" } },
      { ...lead, record: true },
    );
    expect(done.record?.pauses).toEqual([
      expect.objectContaining({
        executionId: result.executionId,
        role: "dispute-settlement-channel",
        kind: PauseKind.Question,
        responder: "finance-lead-3",
        resolution: PauseResolution.Replied,
        answer: { refundCents: 1300, memo: "***" },
      }),
    ]);
    expect(done.record?.pauses[0]?.decision).toBeUndefined();
    const toolStep = done.record?.steps.find((s) => s.type === "tool");
    expect(toolStep).toMatchObject({
      tool: "settle-dispute-tool",
      answer: { refundCents: 1300, memo: "***" },
    });
    expect(JSON.stringify(done.record)).not.toContain("4111");
  });
});

onEachBackend(DeskApplication, (test) => {
  test("an answer to an approval role's pause is DtoValidationError saying to send a decision; nothing changes", async ({
    app,
    mockLlm,
    store,
  }) => {
    const text = "refund for the answer test";
    mockLlm(DeskAgent)
      .when((r) => r.messages.find((m) => m.role === "user")?.content === text)
      .thenReturn(callTool(WordyRefundTool, { orderId: "ord_1", amountCents: 1000 }), replyWith("done"));
    const result = await app.execute(
      DeskWorkflowStart,
      { text },
      { threadId: "t-q7", ownerId: "alice", tenant: acme },
    );
    expect(result.pending[0]?.kind).toBe(PauseKind.Approval);
    const pauseId = app.get(Desk).asked.at(-1)?.pauseId as string;
    expect(app.get(Desk).asked.at(-1)?.ask.kind).toBe(PauseKind.Approval);
    const before = await frozen(store, "acme", pauseId, "acme/t-q7");
    const error = await app.resume({ pauseId, answer: { approved: true } }, lead).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DtoValidationError);
    expect((error as Error).message).toContain(
      "answer it with { decision: { approved, reason?, overrideArguments? } }",
    );
    expect(await frozen(store, "acme", pauseId, "acme/t-q7")).toBe(before);
    expect(app.get(Desk).refunds).toEqual([]);
  });
});

/** Serves `yesno/*` ids as decision models and `chat/*` as chat models; assembly only reads its options. */
@ModelProvider({ name: "mixed-model-provider", serves: ["yesno/*", "chat/*"], decides: ["yesno/*"] })
class MixedModelProvider implements ModelProviderHandler {
  chatModel() {
    return new ScriptedChatModel([]);
  }
}

/** Assembles one tool whose channel is a role built from `role`, with a model interpreter on `model`. */
async function assembleRole(
  role: Record<string, unknown>,
  model: string,
): Promise<AssemblyError | undefined> {
  const suffix = Math.random().toString(36).slice(2, 8);
  @ReplyInterpreter({
    name: `reader-${suffix}-reply-interpreter`,
    description: "Reads replies",
    decidedBy: DecidedBy.Model,
    model,
  })
  class Reader {}
  @ChannelRole({
    name: `asked-${suffix}-channel`,
    description: "Asks",
    answeredBy: PauseAnswerer.Channel,
    replyInterpreter: Reader,
    ...role,
  } as never)
  abstract class Role extends ChannelOf<Role> {}
  @Channel({ name: `impl-${suffix}-channel`, description: "Implements it" })
  class Impl extends Role {
    send() {
      return Promise.resolve(ChannelOutcome.awaitReply<Role>());
    }
  }
  @Tool({
    name: `t-${suffix}-tool`,
    description: "A tool",
    input: DisputeDto,
    output: DoneDto,
    channel: Role,
  })
  class T {
    run() {
      return { status: "ok" };
    }
  }
  @Agent({ name: `a-${suffix}-agent`, description: "d", prompt: "p", model: "chat/agent", tools: [T] })
  class A {}
  @WorkflowStart({ name: `s-${suffix}-workflow-start`, description: "s", input: WorkflowStartTextDto })
  class S {}
  @WorkflowFinish({ name: `f-${suffix}-workflow-finish`, description: "f", output: WorkflowFinishTextDto })
  class F {}
  @Workflow({ name: `w-${suffix}-workflow`, version: "1.0.0", flow: [start(S).toAgent(A).toFinish(F)] })
  class W {}
  @Application({ name: `app-${suffix}-application`, workflows: [W], providers: [MixedModelProvider, Impl] })
  class App {}
  const outcome = await createApp(App, { store: memoryStore() }).then(
    async (app) => {
      await app.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  if (outcome !== undefined) expect(outcome).toBeInstanceOf(AssemblyError);
  return outcome as AssemblyError | undefined;
}

describe("question roles at assembly", () => {
  plainTest(
    "[AS-05] a question role whose interpreter is on a decision model is [reply-interpreter.decision-model], naming the answer DTO",
    async () => {
      const error = await assembleRole({ ask: DisputeDto, answer: SettlementDto }, "yesno/jev-1");
      const found = error?.violations.filter((v) => v.rule === "reply-interpreter.decision-model") ?? [];
      expect(found).toHaveLength(1);
      expect(found[0]?.message).toContain(
        "a decision model: it can only say yes or no, but the answer must be a SettlementDto",
      );
      // The same interpreter model on an approval role is allowed; a chat model on a question role is too.
      expect(await assembleRole({ approves: DisputeDto }, "yesno/jev-1")).toBeUndefined();
      expect(await assembleRole({ ask: DisputeDto, answer: SettlementDto }, "chat/reader")).toBeUndefined();
    },
  );

  plainTest("[AS-05] is reported with every other violation of the application at once", async () => {
    const error = await assembleRole({ ask: PickupDto, answer: SettlementDto }, "yesno/jev-1");
    const rules = error?.violations.map((v) => v.rule) ?? [];
    expect(rules).toContain("reply-interpreter.decision-model");
    expect(rules).toContain("channel.ask-mismatch");
    expect(error?.violations.find((v) => v.rule === "channel.ask-mismatch")?.message).toContain(
      "takes DisputeDto but its channel",
    );
  });

  plainTest(
    "a role declares approves or ask + answer: both, or half a question, is [channel.role-kind]",
    async () => {
      for (const role of [
        { approves: DisputeDto, ask: DisputeDto, answer: SettlementDto },
        { ask: DisputeDto },
        { answer: SettlementDto },
      ]) {
        const error = await assembleRole(role, "chat/reader");
        expect(error?.violations.map((v) => v.rule)).toContain("channel.role-kind");
      }
      const none = await assembleRole({}, "chat/reader");
      expect(none?.violations.find((v) => v.rule === "channel.approves-mismatch")?.message).toContain(
        "or declare ask and answer for a question role",
      );
    },
  );
});
