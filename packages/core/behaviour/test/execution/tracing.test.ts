import { type ChatRequest, callTool, createApp, ExecutionStatus, memoryStore, replyWith } from "@agboss/core";
import { SpanStatusCode, type Tracer, type TracerProvider, trace } from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, expect, test as plainTest } from "vitest";
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
  RefundWorkflowStart,
  scriptedTurns,
} from "../../src/fixtures/refund-app.js";
import { acme, scriptThread } from "../../src/office.js";
import { withoutIds } from "../../src/without-ids.js";

// OpenTelemetry spans through @opentelemetry/api, read back from the SDK's in-memory exporter: an
// execution's pass, each step, each model and tool call, each pause's ask, answer and withdrawal, with
// AGBoss ids as attributes and never a value a person or a tool gave.

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});
beforeEach(() => {
  exporter.reset();
});

const spans = () => exporter.getFinishedSpans();
const named = (prefix: string) => spans().filter((s) => s.name.startsWith(prefix));
const parentOf = (span: ReadableSpan) =>
  spans().find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);
/** Every attribute value of every span, as one text: to prove a value never reached a span. */
const everyAttribute = () => JSON.stringify(spans().map((s) => s.attributes));

onEachBackend(RefundApplication, (test) => {
  test("a run is one execution span; its steps nest under it, and its model and tool calls under their steps, with ids and token counts", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(RefundAgent).thenReturn(
      {
        ...callTool(RefundCardTool, { orderId: "ord_t", amountCents: 700, cardLast4: "4242" }),
        usage: { inputTokens: 11, outputTokens: 3 },
      },
      { ...replyWith("Refunded ord_t"), usage: { inputTokens: 21, outputTokens: 5 } },
    );
    const result = await app.execute(
      RefundWorkflowStart,
      { text: "refund ord_t on card 4242" },
      { threadId: "t-traced", ownerId: "alice@example.com", tenant: acme },
    );
    expect(result.status).toBe(ExecutionStatus.Completed);

    const [execution, ...others] = named("agboss.execution");
    expect(others).toEqual([]);
    expect(execution?.name).toBe("agboss.execution refund-workflow");
    expect(execution?.parentSpanContext).toBeUndefined();
    expect(execution?.attributes).toMatchObject({
      "agboss.tenant_id": "acme",
      "agboss.thread_id": "t-traced",
      "agboss.execution_id": result.executionId,
      "agboss.root_execution_id": result.executionId,
      "agboss.workflow": "refund-workflow",
      "agboss.workflow_version": "1.0.0",
      "agboss.pass": "start",
      "agboss.execution.status": "completed",
    });

    const models = named("chat ");
    expect(models.map((s) => s.name)).toEqual(["chat scripted/refunds", "chat scripted/refunds"]);
    expect(
      models.map((s) => [
        s.attributes["gen_ai.usage.input_tokens"],
        s.attributes["gen_ai.usage.output_tokens"],
      ]),
    ).toEqual([
      [11, 3],
      [21, 5],
    ]);
    expect(models[0]?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "scripted/refunds",
      "agboss.caller": "agent:refund-agent",
      "agboss.execution_id": result.executionId,
    });

    const [tool] = named("execute_tool ");
    expect(tool?.name).toBe("execute_tool refund-card-tool");
    expect(tool?.attributes).toMatchObject({
      "gen_ai.tool.name": "refund-card-tool",
      "agboss.agent": "refund-agent",
      "agboss.thread_id": "t-traced",
    });
    expect(typeof tool?.attributes["gen_ai.tool.call.id"]).toBe("string");

    // Each call nests under a step span, and each step under the execution.
    for (const call of [...models, tool as ReadableSpan]) {
      const step = parentOf(call);
      expect(step?.name.startsWith("agboss.step ")).toBe(true);
      expect(parentOf(step as ReadableSpan)).toBe(execution);
    }
    expect(named("agboss.step ").every((s) => parentOf(s) === execution)).toBe(true);
    expect(spans().every((s) => s.spanContext().traceId === execution?.spanContext().traceId)).toBe(true);

    // Never a value someone gave: not the input, not the tool's arguments, not the owner.
    // (The run's ids left out: a random id may hold a run like 4242.)
    const attributes = withoutIds(everyAttribute());
    for (const value of ["4242", "ord_t", "alice@example.com", "Refunded"])
      expect(attributes).not.toContain(value);
  });

  test("a model call that fails ends its span, its step's and the execution's as errors, by code and name only", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(RefundAgent).thenReturn(() => Promise.reject(new Error("provider down: key sk-secret")));
    await app
      .execute(RefundWorkflowStart, { text: "x" }, { threadId: "t-failing", ownerId: "alice", tenant: acme })
      .catch(() => undefined);
    const [model] = named("chat ");
    expect(model?.status.code).toBe(SpanStatusCode.ERROR);
    expect(model?.attributes["error.type"]).toBe("Error");
    const [execution] = named("agboss.execution");
    expect(execution?.status).toEqual({ code: SpanStatusCode.ERROR, message: "agent.failed" });
    expect(execution?.attributes).toMatchObject({
      "error.type": "AgentFailedError",
      "agboss.error.code": "agent.failed",
    });
    expect(JSON.stringify(spans().map((s) => [s.attributes, s.status, s.events]))).not.toContain("sk-secret");
  });
});

onEachBackend(OfficeApplication, (test) => {
  test("a pause's ask, its answer and a withdrawal each have a span; a channel's pause is named without its id", async ({
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
    const paused = await app.execute(
      OfficeWorkflowStart,
      { text },
      { threadId: "t-paused", ownerId: "alice", tenant: acme },
    );
    expect(paused.status).toBe(ExecutionStatus.Paused);
    const expensePauseId = paused.pending.find((p) => p.pauseId !== undefined)?.pauseId as string;
    const refundPauseId = app.get(Desk).asked.find((a) => a.channel === "refund")?.pauseId as string;

    const asks = named("agboss.pause.ask ");
    expect(asks.map((s) => s.name).sort()).toEqual([
      "agboss.pause.ask expense-approval-channel",
      "agboss.pause.ask refund-approval-channel",
    ]);
    const refundAsk = asks.find((s) => s.name.endsWith("refund-approval-channel"));
    const expenseAsk = asks.find((s) => s.name.endsWith("expense-approval-channel"));
    expect(refundAsk?.attributes["agboss.pause_id"]).toBeUndefined();
    expect(refundAsk?.attributes).toMatchObject({
      "agboss.pause.answered_by": "channel",
      "gen_ai.tool.name": "refund-card-tool",
      "agboss.thread_id": "t-paused",
    });
    expect(expenseAsk?.attributes["agboss.pause_id"]).toBe(expensePauseId);
    expect(parentOf(refundAsk as ReadableSpan)?.name.startsWith("agboss.step ")).toBe(true);
    expect(everyAttribute()).not.toContain(refundPauseId);
    expect(named("agboss.execution")[0]?.attributes["agboss.execution.status"]).toBe("paused");

    exporter.reset();
    await app.resume(
      { pauseId: expensePauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, ownerId: "alice" },
    );
    const [answer] = named("agboss.pause.answer");
    expect(answer?.attributes).toMatchObject({
      "agboss.pause_id": expensePauseId,
      "agboss.execution_id": paused.executionId,
      "agboss.tenant_id": "acme",
    });
    expect(named("agboss.execution")[0]?.attributes["agboss.pass"]).toBe("continue");

    exporter.reset();
    await app.cancel("t-paused", { tenantId: acme.tenantId });
    const [withdraw] = named("agboss.pause.withdraw ");
    expect(withdraw?.name).toBe("agboss.pause.withdraw refund-approval-channel");
    expect(withdraw?.attributes).toMatchObject({ "agboss.pause.resolution": "cancelled" });
    expect(withdraw?.attributes["agboss.pause_id"]).toBeUndefined();
    expect(everyAttribute()).not.toContain(refundPauseId);
  });
});

plainTest(
  "createApp({ tracing: false }) reports no span even with a tracer provider registered",
  async () => {
    scriptedTurns.push((request: ChatRequest) => replyWith(`seen ${request.messages.length}`));
    const app = await createApp(RefundApplication, { store: memoryStore(), tracing: false });
    await app.execute(RefundWorkflowStart, { text: "hello" }, { ownerId: "alice" });
    await app.close();
    expect(spans()).toEqual([]);
  },
);

plainTest(
  "a run nobody records (its execution span not sampled) starts no span for its steps, calls or pauses",
  async () => {
    const unsampled = new BasicTracerProvider({ sampler: new AlwaysOffSampler() });
    const started: string[] = [];
    const counting: TracerProvider = {
      getTracer: (name, version, options) => {
        const tracer = unsampled.getTracer(name, version, options);
        return {
          startSpan: (spanName, spanOptions, context) => {
            started.push(spanName);
            return tracer.startSpan(spanName, spanOptions, context);
          },
          startActiveSpan: tracer.startActiveSpan.bind(tracer),
        } as Tracer;
      },
    };
    trace.disable();
    trace.setGlobalTracerProvider(counting);
    try {
      scriptedTurns.push(callTool(RefundCardTool, { orderId: "ord_q", amountCents: 5 }), replyWith("done"));
      const app = await createApp(RefundApplication, { store: memoryStore() });
      await app.execute(RefundWorkflowStart, { text: "quiet" }, { ownerId: "alice" });
      await app.close();
      expect(started).toEqual(["agboss.execution refund-workflow"]);
    } finally {
      trace.disable();
      trace.setGlobalTracerProvider(provider);
    }
  },
);
