import type { AssembledAgent } from "../assembly/assembled-application.js";
import type { ChatToolCall } from "../models/chat-model.js";
import type { BranchPath } from "../records/branch-path.js";
import type { StepRecord } from "../records/step.js";
import type { LoopState } from "./flow-state.js";

/** The step record of an agent's model turn or tool call. @internal */
export function stepRecord(
  agent: AssembledAgent,
  at: {
    readonly nodeId: string;
    readonly loop: LoopState;
    /** The tool call, for a tool step; with its position among its model turn's calls. */
    readonly call?: ChatToolCall | undefined;
    readonly callIndex?: number | undefined;
    readonly branch?: BranchPath | undefined;
  },
): StepRecord {
  const { nodeId, loop, call, callIndex, branch } = at;
  const innermost = branch?.launches.at(-1);
  return {
    agent: { kind: "agent", name: agent.name },
    nodeId,
    visit: loop.visit,
    toolLoopIteration: loop.iteration,
    validationAttempts: loop.validationAttempts,
    ...(innermost === undefined ? {} : { copy: innermost.index, itemIndex: innermost.itemIndex }),
    ...(call === undefined
      ? {}
      : {
          toolCall: {
            callId: call.id,
            tool: call.name,
            ...(callIndex === undefined ? {} : { index: callIndex }),
          },
        }),
  };
}
