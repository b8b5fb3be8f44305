import {
  Agent,
  AgentFailedError,
  Application,
  type ChatRequest,
  type ChatResponse,
  callTool,
  Dto,
  ExecutionAbortedError,
  ExecutionStatus,
  type ExecutionStream,
  type ExecutionStreamEvent,
  PiiDetector,
  replaceWithToken,
  replyWith,
  start,
  Tool,
  type ToolHandler,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { expect } from "vitest";
import { z } from "zod";
import { onEachBackend } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  BookExpenseTool,
  Desk,
  OfficeApplication,
  OfficeWorkflowStart,
} from "../../src/fixtures/approval-app.js";
import {
  RefundAgent,
  RefundApplication,
  RefundCardTool,
  RefundLedger,
  RefundWorkflowStart,
  ScriptedModelProvider,
} from "../../src/fixtures/refund-app.js";
import { acme, scriptThread } from "../../src/office.js";
import { withoutIds } from "../../src/without-ids.js";

// app.stream and app.streamResume: a run's events as it happens, ending at the rest execute and resume
// return, with the same result.

/** Every event of a stream, read to its end (or to the error its loop throws). */
async function readAll(stream: ExecutionStream<unknown>) {
  const events: ExecutionStreamEvent[] = [];
  let thrown: unknown;
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    thrown = error;
  }
  return { events, thrown, types: events.map((e) => e.type) };
}

class QueryDto extends Dto({ query: z.string() }) {}

@Tool({ name: "flaky-lookup-tool", description: "Looks up, and fails", input: QueryDto, output: QueryDto })
class FlakyLookupTool implements ToolHandler<QueryDto, QueryDto> {
  run(): Promise<QueryDto> {
    return Promise.reject(new Error("the lookup service is down"));
  }
}

@Agent({
  name: "flaky-agent",
  description: "Looks things up",
  prompt: "Look it up.",
  model: "scripted/flaky",
  tools: [FlakyLookupTool],
})
class FlakyAgent {}

@WorkflowStart({ name: "flaky-workflow-start", description: "A question", input: WorkflowStartTextDto })
class FlakyStart {}

@WorkflowFinish({ name: "flaky-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
class FlakyFinish {}

@Workflow({
  name: "flaky-workflow",
  version: "1.0.0",
  flow: [start(FlakyStart).returns(WorkflowStartTextDto).toAgent(FlakyAgent).toFinish(FlakyFinish)],
})
class FlakyWorkflow {}

@Application({ name: "flaky-application", workflows: [FlakyWorkflow], providers: [ScriptedModelProvider] })
class FlakyApplication {}

@Agent({ name: "shielded-agent", description: "Answers", prompt: "Answer.", model: "scripted/shielded" })
class ShieldedAgent {}

@WorkflowStart({ name: "shielded-workflow-start", description: "A request", input: WorkflowStartTextDto })
class ShieldedStart {}

@WorkflowFinish({
  name: "shielded-workflow-finish",
  description: "The answer",
  output: WorkflowFinishTextDto,
})
class ShieldedFinish {}

@Workflow({
  name: "shielded-workflow",
  version: "1.0.0",
  flow: [start(ShieldedStart).returns(WorkflowStartTextDto).toAgent(ShieldedAgent).toFinish(ShieldedFinish)],
  piiPolicies: [replaceWithToken(PiiDetector.email())],
})
class ShieldedWorkflow {}

@Application({
  name: "shielded-application",
  workflows: [ShieldedWorkflow],
  providers: [ScriptedModelProvider],
})
class ShieldedApplication {}

/** A model turn that streams its text in pieces when it is asked to, and records whether it was. */
function streamingTurn(pieces: readonly string[], asked: boolean[]) {
  return (request: ChatRequest): ChatResponse => {
    asked.push(request.onText !== undefined);
    for (const piece of pieces) request.onText?.(piece);
    return replyWith(pieces.join(""));
  };
}

const usage = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens } });

onEachBackend(RefundApplication, (test) => {
  test("a run with a tool streams its start, each model turn, the tool started and returned, and ends at execute's result", async ({
    app,
    mockLlm,
  }) => {
    const turns = (order: string) => [
      {
        ...callTool(RefundCardTool, { orderId: order, amountCents: 1200, cardLast4: "4242" }),
        ...usage(10, 3),
      },
      { ...replyWith(`Refunded ${order}`), ...usage(20, 4) },
    ];
    mockLlm(RefundAgent)
      .when((r: ChatRequest) => r.messages.some((m) => m.content.includes("ord_s")))
      .thenReturn(...turns("ord_s"));
    mockLlm(RefundAgent)
      .when((r: ChatRequest) => r.messages.some((m) => m.content.includes("ord_e")))
      .thenReturn(...turns("ord_e"));
    const stream = app.stream(
      RefundWorkflowStart,
      { text: "refund ord_s" },
      { threadId: "t-stream", ownerId: "alice", tenant: acme },
    );
    const { events, thrown, types } = await readAll(stream);
    expect(thrown).toBeUndefined();
    expect(types).toEqual([
      "execution.started",
      "model.turn",
      "tool.started",
      "tool.returned",
      "model.turn",
      "execution.finished",
    ]);
    const result = await stream.result;
    const [started, firstTurn, toolStarted, toolReturned, lastTurn, finished] = events;
    expect(started).toMatchObject({
      type: "execution.started",
      executionId: result.executionId,
      rootExecutionId: result.executionId,
      threadId: "t-stream",
      workflow: "refund-workflow",
    });
    expect(firstTurn).toMatchObject({
      type: "model.turn",
      caller: "agent:refund-agent",
      model: "scripted/refunds",
      toolCalls: [{ name: "refund-card-tool" }],
      usage: { inputTokens: 10, outputTokens: 3 },
    });
    // The tool call's arguments are never in a model turn's event, and masked by the DTO in the tool's.
    expect(withoutIds(JSON.stringify(firstTurn))).not.toContain("4242");
    expect(toolStarted).toMatchObject({
      type: "tool.started",
      tool: "refund-card-tool",
      agent: "refund-agent",
      arguments: { orderId: "ord_s", amountCents: 1200 },
    });
    expect(withoutIds(JSON.stringify(toolStarted))).not.toContain("4242");
    expect(toolStarted?.type === "tool.started" && toolStarted.callId).toBe(
      firstTurn?.type === "model.turn" && firstTurn.toolCalls[0]?.id,
    );
    expect(toolReturned).toMatchObject({ type: "tool.returned", output: { status: "refunded ord_s" } });
    expect(lastTurn).toMatchObject({ type: "model.turn", text: "Refunded ord_s", toolCalls: [] });
    expect(finished).toMatchObject({ type: "execution.finished", output: result, threadId: "t-stream" });
    for (const event of events) {
      expect(event.executionId).toBe(result.executionId);
      expect(Number.isNaN(Date.parse(event.at))).toBe(false);
    }

    // The same run through execute: the same rest.
    const executed = await app.execute(
      RefundWorkflowStart,
      { text: "refund ord_e" },
      { threadId: "t-execute", ownerId: "alice", tenant: acme },
    );
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.output).toEqual({ text: "Refunded ord_s" });
    expect(executed.output).toEqual({ text: "Refunded ord_e" });
    expect(Object.keys(result).sort()).toEqual(Object.keys(executed).sort());
    expect(app.get(RefundLedger).refunds.map((r) => r.orderId)).toEqual(["ord_s", "ord_e"]);
  });

  test("tool input the DTO refuses never reaches the tool: no tool event, the model reads the error and answers", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(RefundAgent).thenReturn(
      callTool(RefundCardTool, { orderId: "ord_x", amountCents: -5 } as never),
      replyWith("Could not refund"),
    );
    const { events, types } = await readAll(
      app.stream(RefundWorkflowStart, { text: "refund" }, { ownerId: "alice", tenant: acme }),
    );
    // An input the DTO refuses never reaches the tool: the model reads the error, no tool event.
    expect(types).toEqual(["execution.started", "model.turn", "model.turn", "execution.finished"]);
    expect(events.at(-1)).toMatchObject({ output: { output: { text: "Could not refund" } } });
  });

  test("a run that fails streams execution.failed last, its loop throws the error, and result rejects with it", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(RefundAgent).thenReturn(() => Promise.reject(new Error("provider down")));
    const stream = app.stream(RefundWorkflowStart, { text: "x" }, { threadId: "t-fail", ownerId: "alice" });
    const { events, thrown, types } = await readAll(stream);
    expect(types).toEqual(["execution.started", "execution.failed"]);
    expect(thrown).toBeInstanceOf(AgentFailedError);
    await expect(stream.result).rejects.toBe(thrown);
    expect(events.at(-1)).toMatchObject({
      type: "execution.failed",
      threadId: "t-fail",
      error: { name: "AgentFailedError", code: "agent.failed" },
    });
    expect(events.at(-1)?.executionId).toBe(events[0]?.executionId);
  });

  test("input the start refuses: the stream holds execution.failed alone and throws the DtoValidationError", async ({
    app,
  }) => {
    const stream = app.stream(RefundWorkflowStart, { text: "" }, { ownerId: "alice" });
    const { types, thrown } = await readAll(stream);
    expect(types).toEqual(["execution.failed"]);
    expect((thrown as { code?: string }).code).toBe("dto.invalid");
  });

  test("a stream whose signal aborts mid-run ends in execution.failed with execution.aborted", async ({
    app,
    mockLlm,
  }) => {
    let turnStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      turnStarted = resolve;
    });
    mockLlm(RefundAgent).thenReturn((request: ChatRequest): Promise<ChatResponse> => {
      turnStarted();
      return new Promise((_, reject) => {
        request.signal?.addEventListener("abort", () => reject(request.signal?.reason));
      });
    });
    const controller = new AbortController();
    const stream = app.stream(
      RefundWorkflowStart,
      { text: "slow" },
      { ownerId: "alice", tenant: acme, signal: controller.signal },
    );
    const reading = readAll(stream);
    await started;
    controller.abort();
    const { types, thrown, events } = await reading;
    expect(types).toEqual(["execution.started", "execution.failed"]);
    expect(thrown).toBeInstanceOf(ExecutionAbortedError);
    expect(events.at(-1)).toMatchObject({ error: { code: "execution.aborted" } });
  });

  test("an execution budget streams budget.spent for each model call, with the budgets it charged", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(RefundAgent).thenReturn({ ...replyWith("Nothing to refund"), ...usage(7, 2) });
    const { events } = await readAll(
      app.stream(
        RefundWorkflowStart,
        { text: "hello" },
        { ownerId: "alice", tenant: acme, budget: { tokens: 1_000 } },
      ),
    );
    const spent = events.filter((e) => e.type === "budget.spent");
    expect(spent).toHaveLength(1);
    expect(spent[0]).toMatchObject({
      caller: "agent:refund-agent",
      usage: { inputTokens: 7, outputTokens: 2 },
      budgets: [{ level: "execution" }],
    });
  });

  test("a model that streams its text: each piece is a model.text event before the turn's model.turn; execute asks for no pieces", async ({
    app,
    mockLlm,
  }) => {
    const asked: boolean[] = [];
    mockLlm(RefundAgent).thenReturn(
      streamingTurn(["Nothing ", "to ", "refund"], asked),
      streamingTurn(["Nothing ", "to ", "refund"], asked),
    );
    const { events, types } = await readAll(
      app.stream(RefundWorkflowStart, { text: "hello" }, { ownerId: "alice", tenant: acme }),
    );
    expect(types).toEqual([
      "execution.started",
      "model.text",
      "model.text",
      "model.text",
      "model.turn",
      "execution.finished",
    ]);
    expect(events.filter((e) => e.type === "model.text").map((e) => e.text)).toEqual([
      "Nothing ",
      "to ",
      "refund",
    ]);
    expect(events[1]).toMatchObject({ caller: "agent:refund-agent", model: "scripted/refunds" });
    expect(events[4]).toMatchObject({ type: "model.turn", text: "Nothing to refund" });
    await app.execute(RefundWorkflowStart, { text: "hello" }, { ownerId: "alice", tenant: acme });
    expect(asked).toEqual([true, false]);
  });

  test("leaving the loop early stops reading, not the run: result still settles as execute's", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(RefundAgent).thenReturn(
      callTool(RefundCardTool, { orderId: "ord_l", amountCents: 100 }),
      replyWith("Refunded ord_l"),
    );
    const stream = app.stream(RefundWorkflowStart, { text: "refund ord_l" }, { ownerId: "alice" });
    for await (const event of stream) {
      if (event.type === "execution.started") break;
    }
    const result = await stream.result;
    expect(result.output).toEqual({ text: "Refunded ord_l" });
    expect(app.get(RefundLedger).refunds).toHaveLength(1);
  });
});

onEachBackend(OfficeApplication, (test) => {
  test("a run that pauses streams pause.asked then execution.paused; streamResume streams the answer, the approved tool and the finish", async ({
    app,
    mockLlm,
  }) => {
    const text = "refund and book on t-paused";
    scriptThread(
      mockLlm,
      text,
      callTool(ApprovedRefundTool, { orderId: "ord_9", amountCents: 900 }, [
        BookExpenseTool,
        { purpose: "taxi", amountCents: 2500 },
      ]),
      replyWith("Both done"),
    );
    const first = app.stream(
      OfficeWorkflowStart,
      { text },
      { threadId: "t-paused", ownerId: "alice", tenant: acme },
    );
    const asked = await readAll(first);
    expect(asked.types).toEqual([
      "execution.started",
      "model.turn",
      "pause.asked",
      "pause.asked",
      "execution.paused",
    ]);
    const paused = await first.result;
    expect(paused.status).toBe(ExecutionStatus.Paused);
    expect(asked.events.at(-1)).toMatchObject({ type: "execution.paused", output: paused });
    const pauses = asked.events.filter((e) => e.type === "pause.asked");
    const refundPause = pauses.find((e) => e.tool === "refund-card-tool");
    const expensePause = pauses.find((e) => e.tool === "book-expense-tool");
    // A channel's pause is named without its id (the channel's secret); the owner's has it.
    expect(refundPause).toMatchObject({
      pauseId: undefined,
      role: "refund-approval-channel",
      agent: "office-agent",
    });
    const expensePauseId = paused.pending.find((p) => p.pauseId !== undefined)?.pauseId;
    expect(expensePauseId).toBeDefined();
    expect(expensePause).toMatchObject({ pauseId: expensePauseId });

    const refundPauseId = app
      .get(Desk)
      .asked.filter((a) => a.channel === "refund")
      .at(-1)?.pauseId as string;
    const afterRefund = await readAll(
      app.streamResume(
        { pauseId: refundPauseId, decision: { approved: true } },
        { tenantId: acme.tenantId, answeredBy: "manager-1" },
      ),
    );
    expect(afterRefund.types).toEqual([
      "execution.resumed",
      "pause.answered",
      "tool.started",
      "tool.returned",
      "execution.paused",
    ]);
    expect(afterRefund.events[0]).toMatchObject({ pauseId: undefined, answeredBy: "manager-1" });
    expect(afterRefund.events[1]).toMatchObject({ outcome: "approved", tool: "refund-card-tool" });

    const resumed = app.streamResume(
      { pauseId: expensePauseId as string, decision: { approved: false, reason: "no taxis" } },
      { tenantId: acme.tenantId, ownerId: "alice" },
    );
    const afterExpense = await readAll(resumed);
    expect(afterExpense.types).toEqual([
      "execution.resumed",
      "pause.answered",
      "model.turn",
      "execution.finished",
    ]);
    expect(afterExpense.events[0]).toMatchObject({ pauseId: expensePauseId, answeredBy: "alice" });
    expect(afterExpense.events[1]).toMatchObject({ outcome: "rejected", pauseId: expensePauseId });
    const done = await resumed.result;
    expect(done.output).toEqual({ text: "Both done" });
    expect(afterExpense.events.at(-1)).toMatchObject({ output: done });
  });
});

onEachBackend(FlakyApplication, (test) => {
  test("a tool that throws streams tool.failed with its error, and the run goes on to the model's answer", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(FlakyAgent).thenReturn(
      callTool(FlakyLookupTool, { query: "weather" }),
      replyWith("The lookup failed, sorry"),
    );
    const { events, types } = await readAll(
      app.stream(FlakyStart, { text: "weather?" }, { ownerId: "alice" }),
    );
    expect(types).toEqual([
      "execution.started",
      "model.turn",
      "tool.started",
      "tool.failed",
      "model.turn",
      "execution.finished",
    ]);
    expect(events[3]).toMatchObject({
      type: "tool.failed",
      tool: "flaky-lookup-tool",
      agent: "flaky-agent",
      error: { name: "Error", message: "the lookup service is down" },
    });
  });
});

onEachBackend(ShieldedApplication, (test) => {
  test("under a PII policy the model is not asked for pieces (they would hold tokens): its text comes whole, revealed, in model.turn", async ({
    app,
    mockLlm,
  }) => {
    const asked: boolean[] = [];
    let read = "";
    mockLlm(ShieldedAgent).thenReturn((request: ChatRequest) => {
      read = request.messages.map((m) => m.content).join("\n");
      return streamingTurn(["Wrote to ", /⟦pii:\d+⟧/.exec(read)?.[0] ?? "nobody"], asked)(request);
    });
    const { events, types } = await readAll(
      app.stream(ShieldedStart, { text: "write to bob@example.com" }, { ownerId: "alice" }),
    );
    expect(read).not.toContain("bob@example.com");
    expect(asked).toEqual([false]);
    expect(types).toEqual(["execution.started", "model.turn", "execution.finished"]);
    expect(events[1]).toMatchObject({ type: "model.turn", text: "Wrote to bob@example.com" });
  });
});
