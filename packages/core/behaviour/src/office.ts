import type { App, ChatRequest } from "@agboss/core";
import { callTool, ExecutionContext, replyWith } from "@agboss/core";
import type { ModelScript, ModelTurn } from "@agboss/testing";
import {
  ApprovedRefundTool,
  BookExpenseTool,
  Desk,
  OfficeAgent,
  OfficeWorkflowStart,
} from "./fixtures/approval-app.js";

export const acme = { tenantId: "acme" } as const;

/** Scripts the office agent for one thread only: its turns answer requests whose first user message is `text`. */
export function scriptThread(
  mockLlm: (c: typeof OfficeAgent) => ModelScript,
  text: string,
  ...turns: ModelTurn[]
): void {
  mockLlm(OfficeAgent)
    .when((request: ChatRequest) => request.messages.find((m) => m.role === "user")?.content === text)
    .thenReturn(...turns);
}

/** Runs the office workflow with one turn that calls both approval tools; returns the paused result and both pause ids. */
export async function pauseTwo(
  app: App,
  mockLlm: (c: typeof OfficeAgent) => ModelScript,
  threadId = "t-office",
) {
  const text = `refund and book on ${threadId}`;
  scriptThread(
    mockLlm,
    text,
    callTool(ApprovedRefundTool, { orderId: "ord_9", amountCents: 900, cardNumber: "4242424242424242" }, [
      BookExpenseTool,
      { purpose: "taxi", amountCents: 2500 },
    ]),
    replyWith("Both done"),
  );
  const result = await app.execute(
    OfficeWorkflowStart,
    { text },
    { threadId, ownerId: "alice", tenant: acme },
  );
  const asked = app.get(Desk).asked;
  const refundPauseId = asked.filter((a) => a.channel === "refund").at(-1)?.pauseId as string;
  const expensePauseId = asked.filter((a) => a.channel === "expense").at(-1)?.pauseId as string;
  return { result, refundPauseId, expensePauseId, threadKey: `acme/${threadId}` };
}

/** Runs the office workflow with one refund call only; `after` are the agent's turns once the tool returns. */
export async function pauseRefund(
  app: App,
  mockLlm: (c: typeof OfficeAgent) => ModelScript,
  threadId = "t-refund",
  args: Record<string, unknown> = { orderId: "ord_1", amountCents: 1000 },
  after: readonly ModelTurn[] = [replyWith("Refund handled")],
) {
  const text = `refund on ${threadId}`;
  scriptThread(mockLlm, text, callTool(ApprovedRefundTool, args), ...after);
  const result = await app.execute(
    OfficeWorkflowStart,
    { text },
    { threadId, ownerId: "alice", tenant: acme },
  );
  const pauseId = app
    .get(Desk)
    .asked.filter((a) => a.channel === "refund")
    .at(-1)?.pauseId as string;
  return { result, pauseId, threadKey: `acme/${threadId}` };
}

/** Runs the office workflow with one expense call only (a ThreadOwner pause). */
export async function pauseExpense(
  app: App,
  mockLlm: (c: typeof OfficeAgent) => ModelScript,
  threadId = "t-expense",
) {
  const text = `book on ${threadId}`;
  scriptThread(
    mockLlm,
    text,
    callTool(BookExpenseTool, { purpose: "lunch", amountCents: 1500 }),
    replyWith("Expense handled"),
  );
  const result = await app.execute(
    OfficeWorkflowStart,
    { text },
    { threadId, ownerId: "alice", tenant: acme },
  );
  return { result, pauseId: result.pending[0]?.pauseId as string, threadKey: `acme/${threadId}` };
}

/** A gate a held tool waits at: `entered` settles once a run has begun, `open()` lets every run through. */
function toolGate() {
  let enter = () => {};
  const entered = new Promise<void>((resolve) => {
    enter = resolve;
  });
  let opened = false;
  return {
    entered,
    enter: () => enter(),
    isOpen: () => opened,
    open: () => {
      opened = true;
    },
  };
}

/**
 * Holds every run of the refund tool inside the tool until `open()` is called: `entered` settles once a
 * run has begun. For a test that acts while an approved tool is running.
 */
export function holdRefundTool(tool: {
  readonly run: {
    mockImplementation(run: (input: { orderId: string }) => Promise<{ status: string }>): unknown;
  };
}) {
  const gate = toolGate();
  tool.run.mockImplementation(async (input) => {
    gate.enter();
    while (!gate.isOpen()) await new Promise((resolve) => setTimeout(resolve, 5));
    return { status: `refunded ${input.orderId}` };
  });
  return { entered: gate.entered, open: gate.open };
}

/**
 * Holds every run of a tool until `open()` is called, as a careful tool does: it gives up without its
 * effect once its signal aborts. `runs` lists what happened in order (`start <key>`, `aborted`, `effect
 * <key>`, with the step's idempotency key) and `aborted` each abort's reason; `entered` settles once a
 * run has begun.
 */
export function holdCarefulTool<TInput>(
  app: App,
  tool: {
    readonly run: {
      mockImplementation(run: (input: TInput) => Promise<{ status: string }>): unknown;
    };
  },
) {
  const context = app.get(ExecutionContext);
  const runs: string[] = [];
  const aborted: unknown[] = [];
  const gate = toolGate();
  tool.run.mockImplementation(async () => {
    const signal = context.signal;
    runs.push(`start ${context.step?.idempotencyKey}`);
    gate.enter();
    while (!gate.isOpen()) {
      if (signal.aborted) {
        runs.push("aborted");
        aborted.push(signal.reason);
        throw signal.reason;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    runs.push(`effect ${context.step?.idempotencyKey}`);
    return { status: "done" };
  });
  return { runs, aborted, entered: gate.entered, open: gate.open };
}
