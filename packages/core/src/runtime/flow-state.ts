import { Annotation } from "@langchain/langgraph";
import type { ChatMessage } from "../models/chat-model.js";
import type { ExecutionStep } from "../records/execution-record.js";

/** Where an agent's tool loop stands within one visit. @internal */
export interface LoopState {
  readonly visit: number;
  readonly iteration: number;
  readonly validationAttempts: number;
  /** True while the visit is under way. */
  readonly active: boolean;
  /** Where the loop goes after the last model turn. */
  readonly route: "tools" | "retry" | "done";
}

/** Per-execution scratch state, reset when an execution starts on the thread. @internal */
export interface RunState {
  readonly executionId: string;
  readonly input: unknown;
  readonly outputs: Readonly<Record<string, unknown>>;
  /** How many times each step ran in this execution. */
  readonly visits: Readonly<Record<string, number>>;
  readonly steps: readonly ExecutionStep[];
  readonly output: unknown;
}

/** A change to {@link RunState}; concurrent tasks' patches merge. @internal */
export interface RunPatch {
  readonly reset?: { readonly executionId: string; readonly input: unknown };
  readonly outputs?: Readonly<Record<string, unknown>>;
  readonly visits?: Readonly<Record<string, number>>;
  readonly steps?: readonly ExecutionStep[];
  readonly output?: unknown;
}

const emptyRun: RunState = {
  executionId: "",
  input: undefined,
  outputs: {},
  visits: {},
  steps: [],
  output: undefined,
};

function applyRunPatch(state: RunState, patch: RunPatch): RunState {
  const base: RunState = patch.reset === undefined ? state : { ...emptyRun, ...patch.reset };
  return {
    ...base,
    outputs: patch.outputs === undefined ? base.outputs : { ...base.outputs, ...patch.outputs },
    visits: patch.visits === undefined ? base.visits : { ...base.visits, ...patch.visits },
    steps: patch.steps === undefined ? base.steps : [...base.steps, ...patch.steps],
    output: "output" in patch ? patch.output : base.output,
  };
}

function mergeConversations(
  state: Readonly<Record<string, readonly ChatMessage[]>>,
  patch: Readonly<Record<string, readonly ChatMessage[]>>,
): Record<string, readonly ChatMessage[]> {
  const out: Record<string, readonly ChatMessage[]> = { ...state };
  for (const [nodeId, messages] of Object.entries(patch)) out[nodeId] = [...(out[nodeId] ?? []), ...messages];
  return out;
}

/** The LangGraph state of every flow: conversations persist across a thread's executions. @internal */
export const FlowState = Annotation.Root({
  conversations: Annotation<Readonly<Record<string, readonly ChatMessage[]>>>({
    reducer: mergeConversations,
    default: () => ({}),
  }),
  run: Annotation<RunState, RunPatch>({ reducer: applyRunPatch, default: () => emptyRun }),
});

/** A flow's state as nodes read it. @internal */
export type FlowStateValue = typeof FlowState.State;
/** What a node may return. @internal */
export type FlowStateUpdate = typeof FlowState.Update;
