import type { AssembledTool } from "../assembly/assembled-application.js";
import { DEFAULT_TOOL_TIMEOUT, type ToolHandler } from "../components/tool.js";
import { ExecutionContext, type StepContext } from "../container/execution-context.js";
import { maskWith } from "../dto/sensitive.js";
import { ToolTimeoutError } from "../errors/runtime-errors.js";
import { streamErrorOf, tellProgress } from "../services/progress.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { frameAttributes, spanOf } from "../services/tracing.js";
import { toMilliseconds } from "../time/duration.js";

/**
 * Runs a tool's handler in its step's execution frame, under its timeout on the Clock: the frame's
 * signal aborts at the timeout or when the pass is cancelled, and the call is cut off.
 * @internal
 */
export async function runTool(
  services: RuntimeServices,
  call: {
    readonly tool: AssembledTool;
    readonly input: unknown;
    readonly step: StepContext;
    /** A question role's answer, the handler's second argument; undefined for an approval. */
    readonly answer?: unknown;
  },
): Promise<unknown> {
  const { tool, input, step, answer } = call;
  const outer = ExecutionContext.current();
  const controller = new AbortController();
  const timeoutMs = toMilliseconds(tool.options.timeout ?? DEFAULT_TOOL_TIMEOUT);
  const onOuterAbort = () => controller.abort(outer?.signal.reason);
  outer?.signal.addEventListener("abort", onOuterAbort, { once: true });
  let timer: { cancel(): void } | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = services.clock.setTimer(timeoutMs, () => {
      const error = new ToolTimeoutError(tool.name, timeoutMs);
      controller.abort(error);
      reject(error);
    });
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
  });
  timedOut.catch(() => undefined);
  try {
    const handler = services.container.get(tool.cls) as ToolHandler<unknown, unknown, unknown>;
    const frame = outer === undefined ? undefined : { ...outer, step, signal: controller.signal };
    // A question role's answer is the second argument; a tool without one is called with its input alone.
    const call = () =>
      Promise.resolve(
        answer === undefined
          ? (handler as ToolHandler<unknown, unknown>).run(input)
          : handler.run(input, answer),
      );
    const named = { tool: tool.name, callId: step.callId, agent: step.agent };
    tellProgress(services, outer, () => ({
      type: "tool.started",
      ...named,
      arguments: maskWith(tool.options.input.schema, input),
    }));
    const span = services.tracing?.start(
      `execute_tool ${tool.name}`,
      () => ({
        ...frameAttributes(outer),
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool.name,
        "gen_ai.tool.call.id": step.callId,
        "agboss.agent": step.agent,
        "agboss.step.node_id": step.nodeId,
      }),
      spanOf(outer),
    );
    const inSpan = span === undefined || !span.recording ? call : () => span.run(call);
    const running = frame === undefined ? inSpan() : ExecutionContext.run(frame, inSpan);
    try {
      const output = await Promise.race([running, timedOut]);
      span?.end();
      tellProgress(services, outer, () => ({
        type: "tool.returned",
        ...named,
        output: maskWith(tool.options.output.schema, output),
      }));
      return output;
    } catch (error) {
      span?.end(error);
      // A pass stopped from outside (cancelled, aborted, closed) is no failure of the tool.
      if (outer?.signal.aborted !== true) {
        tellProgress(services, outer, () => ({ type: "tool.failed", ...named, error: streamErrorOf(error) }));
      }
      throw error;
    }
  } finally {
    timer?.cancel();
    outer?.signal.removeEventListener("abort", onOuterAbort);
  }
}
