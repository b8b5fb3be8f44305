import { isGraphInterrupt } from "@langchain/langgraph";
import { ExecutionContext } from "../container/execution-context.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { frameAttributes, spanOf } from "../services/tracing.js";

/**
 * A graph node that runs in a span of its own (`agboss.step`), when the application traces: the model
 * calls, tool calls and pauses of the node nest under it. A node that interrupts (its call waits for a
 * person) ends its span as paused, not failed. Without tracing, the node itself.
 * @internal
 */
export function tracedNode<A extends unknown[], R>(
  services: RuntimeServices,
  nodeId: string,
  node: (...args: A) => R,
): (...args: A) => R | Promise<Awaited<R>> {
  const { tracing } = services;
  if (tracing === undefined) return node;
  return async (...args: A): Promise<Awaited<R>> => {
    const frame = ExecutionContext.current();
    const parent = spanOf(frame);
    // A run nobody records (no provider registered, or not sampled): its steps cost nothing.
    if (frame === undefined || parent?.recording === false) return await node(...args);
    const span = tracing.start(
      `agboss.step ${nodeId}`,
      () => ({ ...frameAttributes(frame), "agboss.step.node_id": nodeId }),
      parent,
    );
    try {
      const out = await ExecutionContext.run({ ...frame, traceSpan: span }, () =>
        span.run(() => node(...args)),
      );
      span.end();
      return out;
    } catch (error) {
      if (isGraphInterrupt(error)) {
        span.set({ "agboss.step.paused": true });
        span.end();
      } else {
        span.end(error);
      }
      throw error;
    }
  };
}
