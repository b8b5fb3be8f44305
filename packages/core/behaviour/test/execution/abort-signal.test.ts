import {
  Agent,
  type App,
  Application,
  type ChatRequest,
  type ChatResponse,
  callTool,
  Dto,
  DtoValidationError,
  ExecutionAbortedError,
  ExecutionContext,
  ExecutionStatus,
  Injectable,
  PauseStatus,
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
import { onEachBackendAndPostgres } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  OfficeApplication,
  OfficeWorkflowStart,
} from "../../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";
import { acme, pauseRefund, scriptThread } from "../../src/office.js";

// A caller's AbortSignal stops a run at its next step. Nothing is ended: the execution stays recorded as
// running with its lease released, so the sweep carries it on from its last checkpoint, or app.cancel
// ends it. These tests abort in the middle of a tool and of a model turn, and check both ways on.

const RETENTION_MS = 24 * 3_600_000;

class LookupDto extends Dto({ query: z.string().min(1) }) {}
class FoundDto extends Dto({ found: z.string() }) {}

/** Holds the lookup tool until a test opens it; counts its runs, its finishes and its cut-offs. */
@Injectable()
class Gate {
  open = false;
  runs = 0;
  finished = 0;
  cutOff = 0;
  #started: (() => void) | undefined;
  /** Resolves when the tool's next run has started. */
  nextRun(): Promise<void> {
    return new Promise((resolve) => {
      this.#started = resolve;
    });
  }
  started(): void {
    this.runs += 1;
    this.#started?.();
  }
}

@Tool({
  name: "slow-lookup-tool",
  description: "Looks something up, slowly",
  input: LookupDto,
  output: FoundDto,
  deps: [Gate, ExecutionContext],
})
class SlowLookupTool implements ToolHandler<LookupDto, FoundDto> {
  constructor(
    private readonly gate: Gate,
    private readonly context: ExecutionContext,
  ) {}
  run(input: LookupDto): Promise<FoundDto> {
    const { gate } = this;
    const signal = this.context.signal;
    gate.started();
    if (gate.open) {
      gate.finished += 1;
      return Promise.resolve({ found: `found ${input.query}` });
    }
    return new Promise((_, reject) => {
      signal.addEventListener("abort", () => {
        gate.cutOff += 1;
        reject(signal.reason);
      });
    });
  }
}

@Agent({
  name: "lookup-agent",
  description: "Looks things up",
  prompt: "Look up what is asked.",
  model: "scripted/lookup",
  tools: [SlowLookupTool],
})
class LookupAgent {}

@WorkflowStart({ name: "lookup-workflow-start", description: "A question", input: WorkflowStartTextDto })
class LookupStart {}

@WorkflowFinish({ name: "lookup-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
class LookupFinish {}

@Workflow({
  name: "lookup-workflow",
  version: "1.0.0",
  flow: [start(LookupStart).returns(WorkflowStartTextDto).toAgent(LookupAgent).toFinish(LookupFinish)],
})
class LookupWorkflow {}

@Application({
  name: "lookup-application",
  workflows: [LookupWorkflow],
  providers: [Gate, ScriptedModelProvider],
})
class LookupApplication {}

/** A model turn that starts, tells the test, and never answers: it ends when its signal aborts. */
function hangingTurn(started: () => void) {
  return (request: ChatRequest): Promise<ChatResponse> => {
    started();
    return new Promise((_, reject) => {
      request.signal?.addEventListener("abort", () => reject(request.signal?.reason));
    });
  };
}

/** The latest execution of a thread, as stored. */
async function latestOf(app: App, threadId: string) {
  const thread = await app.store.threads.findByTenantIdAndThreadId(acme.tenantId, threadId);
  return app.record(thread?.latestExecutionId ?? "", { tenantId: acme.tenantId });
}

/** Lets the sweep's grace pass and sweeps until the execution is recorded as ended. */
async function sweepUntilEnded(
  app: App,
  clock: { advance(ms: number): Promise<void> },
  executionId: string,
): Promise<void> {
  await clock.advance(2_000);
  for (let round = 0; round < 200; round += 1) {
    await app.sweepOnce(RETENTION_MS);
    const record = await app.record(executionId, { tenantId: acme.tenantId });
    if (record !== undefined && record.status !== ExecutionStatus.Running) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

onEachBackendAndPostgres(LookupApplication, (test) => {
  test("aborted in the middle of a tool, execute rejects with execution.aborted; the run stays running, its lease free, and the sweep finishes it", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    mockLlm(LookupAgent).thenReturn(
      callTool(SlowLookupTool, { query: "ticket 7" }),
      replyWith("Ticket 7 found"),
    );
    const gate = app.get(Gate);
    const started = gate.nextRun();
    const controller = new AbortController();
    const running = app.execute(
      LookupStart,
      { text: "find ticket 7" },
      { threadId: "t-tool", ownerId: "alice", tenant: acme, signal: controller.signal },
    );
    await started;
    controller.abort(new Error("the client went away"));
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionAbortedError);
    expect((error as ExecutionAbortedError).code).toBe("execution.aborted");
    expect(((error as Error).cause as Error).message).toBe("the client went away");
    expect(gate.cutOff).toBe(1);

    const executionId = (error as ExecutionAbortedError).executionId as string;
    expect((await latestOf(app, "t-tool"))?.executionId).toBe(executionId);
    expect((await app.record(executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Running,
    );
    // The lease was released, not left to lapse.
    const probe = await store.leases.acquire({
      key: "acme/t-tool",
      holder: "probe",
      now: clock.now(),
      ttlMs: 1_000,
    });
    expect(probe).toBeDefined();
    if (probe !== undefined) await store.leases.release(probe);

    // Carried on from the checkpoint: the cut-off tool runs again, then the model's last turn.
    gate.open = true;
    await sweepUntilEnded(app, clock, executionId);
    const record = await app.record(executionId, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(record?.output).toEqual({ text: "Ticket 7 found" });
    expect(gate.runs).toBe(2);
    expect(gate.finished).toBe(1);
  });

  test("aborted in the middle of a model turn, the run can be cancelled, and the thread takes a new execution at once", async ({
    app,
    mockLlm,
  }) => {
    let turnStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      turnStarted = resolve;
    });
    // The first turn calls the tool (its step is stored); the model's next turn hangs.
    app.get(Gate).open = true;
    mockLlm(LookupAgent).thenReturn(
      callTool(SlowLookupTool, { query: "ticket 8" }),
      hangingTurn(turnStarted),
      replyWith("Second answer"),
    );
    const controller = new AbortController();
    const running = app.execute(
      LookupStart,
      { text: "first" },
      { threadId: "t-model", ownerId: "alice", tenant: acme, signal: controller.signal },
    );
    await started;
    controller.abort();
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionAbortedError);
    const aborted = (error as ExecutionAbortedError).executionId as string;
    expect((await app.record(aborted, { tenantId: acme.tenantId }))?.status).toBe(ExecutionStatus.Running);

    await app.cancel("t-model", { tenantId: acme.tenantId });
    expect((await app.record(aborted, { tenantId: acme.tenantId }))?.status).toBe(ExecutionStatus.Cancelled);
    const next = await app.execute(
      LookupStart,
      { text: "second" },
      { threadId: "t-model", ownerId: "alice", tenant: acme },
    );
    expect(next.status).toBe(ExecutionStatus.Completed);
    expect(next.output).toEqual({ text: "Second answer" });
  });

  test("aborted before its first step was stored, a start has nothing to carry on: it is recorded as cancelled and the thread is free", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(LookupAgent).thenReturn(replyWith("Second answer"));
    const controller = new AbortController();
    const running = app.execute(
      LookupStart,
      { text: "first" },
      { threadId: "t-early", ownerId: "alice", tenant: acme, signal: controller.signal },
    );
    controller.abort(new Error("changed my mind"));
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionAbortedError);
    expect((error as Error).message).toContain("before its first step was stored");
    expect(((error as Error).cause as Error).message).toBe("changed my mind");
    const executionId = (error as ExecutionAbortedError).executionId as string;
    const record = await app.record(executionId, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Cancelled);
    expect(record?.error?.code).toBe("execution.aborted");
    const next = await app.execute(
      LookupStart,
      { text: "second" },
      { threadId: "t-early", ownerId: "alice", tenant: acme },
    );
    expect(next.output).toEqual({ text: "Second answer" });
  });

  test("a signal aborted before execute is called: rejected with execution.aborted, nothing stored", async ({
    app,
    store,
  }) => {
    const error = await app
      .execute(
        LookupStart,
        { text: "never" },
        { threadId: "t-never", ownerId: "alice", tenant: acme, signal: AbortSignal.abort() },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionAbortedError);
    expect((error as ExecutionAbortedError).executionId).toBeUndefined();
    expect(await store.threads.findByTenantIdAndThreadId(acme.tenantId, "t-never")).toBeUndefined();
    expect(await store.executions.listByTenantIdAndThreadId(acme.tenantId, "t-never")).toEqual([]);
  });
});

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("a signal that is no AbortSignal is a DtoValidationError naming it, on execute, resume and answer", async ({
    app,
    mockLlm,
  }) => {
    const bad = { signal: "soon" } as unknown as { signal: AbortSignal };
    const started = await app
      .execute(OfficeWorkflowStart, { text: "x" }, { ownerId: "alice", tenant: acme, ...bad })
      .catch((e: unknown) => e);
    expect(started).toBeInstanceOf(DtoValidationError);
    expect((started as DtoValidationError).issues.map((i) => i.path)).toEqual(["signal"]);
    const { pauseId } = await pauseRefund(app, mockLlm, "t-bad-signal");
    for (const call of [app.resume.bind(app), app.answer.bind(app)]) {
      const error = await call(
        { pauseId, decision: { approved: true } },
        { tenantId: acme.tenantId, answeredBy: "manager-1", ...bad },
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DtoValidationError);
    }
  });

  test("a resume aborted in the model turn after the approved tool: the tool's result is kept, and the sweep finishes without running it again", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    let turnStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      turnStarted = resolve;
    });
    const text = "refund on t-resume";
    scriptThread(
      mockLlm,
      text,
      callTool(ApprovedRefundTool, { orderId: "ord_5", amountCents: 500 }),
      hangingTurn(turnStarted) as unknown as ChatResponse,
      replyWith("Refund handled"),
    );
    const paused = await app.execute(
      OfficeWorkflowStart,
      { text },
      {
        threadId: "t-resume",
        ownerId: "alice",
        tenant: acme,
      },
    );
    expect(paused.status).toBe(ExecutionStatus.Paused);
    const pauseId = app.get(Desk).asked.at(-1)?.pauseId as string;

    const controller = new AbortController();
    const resuming = app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "manager-1", signal: controller.signal },
    );
    await started;
    controller.abort();
    const error = await resuming.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionAbortedError);
    expect(app.get(Desk).refunds).toHaveLength(1);
    expect((await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId))?.status).toBe(
      PauseStatus.Taken,
    );
    expect((await app.record(paused.executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Running,
    );

    await sweepUntilEnded(app, clock, paused.executionId);
    const record = await app.record(paused.executionId, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(record?.output).toEqual({ text: "Refund handled" });
    expect(app.get(Desk).refunds).toHaveLength(1);
  });

  test("answer's signal stops the background move: the answer stays recorded and the sweep carries the tree on", async ({
    app,
    mockLlm,
    clock,
  }) => {
    let turnStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      turnStarted = resolve;
    });
    const text = "refund on t-answer";
    scriptThread(
      mockLlm,
      text,
      callTool(ApprovedRefundTool, { orderId: "ord_6", amountCents: 600 }),
      hangingTurn(turnStarted) as unknown as ChatResponse,
      replyWith("Refund handled"),
    );
    const paused = await app.execute(
      OfficeWorkflowStart,
      { text },
      {
        threadId: "t-answer",
        ownerId: "alice",
        tenant: acme,
      },
    );
    const pauseId = app.get(Desk).asked.at(-1)?.pauseId as string;
    const controller = new AbortController();
    const receipt = await app.answer(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "manager-1", signal: controller.signal },
    );
    expect(receipt.pauseId).toBe(pauseId);
    await started;
    controller.abort();
    await app.idle();
    expect((await app.record(paused.executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Running,
    );
    await sweepUntilEnded(app, clock, paused.executionId);
    expect((await app.record(paused.executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Completed,
    );
    expect(app.get(Desk).refunds).toHaveLength(1);
  });

  test("a resume whose signal is aborted before the call records nothing: the pause still waits", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-early");
    const error = await app
      .resume(
        { pauseId, decision: { approved: true } },
        { tenantId: acme.tenantId, answeredBy: "manager-1", signal: AbortSignal.abort() },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionAbortedError);
    expect((await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId))?.status).toBe(
      PauseStatus.Pending,
    );
  });
});
