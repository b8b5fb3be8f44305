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

/** A branch that failed, as a sibling's result keeps it. @internal */
export interface BranchFailure {
  readonly index: number;
  readonly branch: string;
  readonly error: { readonly name: string; readonly code: string | undefined; readonly message: string };
}

/** What one branch of a parallel launch ended with. @internal */
export interface BranchResult {
  readonly index: number;
  /** The branch's agent. */
  readonly branch: string;
  readonly itemIndex?: number | undefined;
  readonly output?: unknown;
  readonly error?:
    | { readonly name: string; readonly code: string | undefined; readonly message: string }
    | undefined;
  /** True when the launch withdrew it before it finished. */
  readonly withdrawn?: boolean | undefined;
  /**
   * A branch withdrawn before it started, because a sibling failed under FailFast: that sibling and its
   * error, so the join fails with it even should the sibling's own result not have been stored.
   */
  readonly withdrawnFor?: BranchFailure | undefined;
  /** When it ended, on the application's Clock. */
  readonly endedAt?: number | undefined;
  /** Orders branches that ended at the same instant. */
  readonly endSeq?: number | undefined;
}

/** A child execution that finished within this execution. @internal */
export interface ChildSummary {
  readonly executionId: string;
  readonly parentExecutionId: string;
  readonly workflow: { readonly name: string; readonly version: string };
  readonly start: string;
  readonly itemIndex?: number | undefined;
  /** Sensitive fields masked. */
  readonly output: unknown;
  readonly steps: readonly ExecutionStep[];
  /** Its own finished children. */
  readonly children: readonly ChildSummary[];
}

/** A parallel launch within one execution. @internal */
export interface LaunchState {
  readonly startedAt: number;
  /** How many branches it sent, when known. */
  readonly branches?: number | undefined;
  readonly results: Readonly<Record<string, BranchResult>>;
}

/** Per-execution scratch state, reset when an execution starts on the thread. @internal */
export interface RunState {
  readonly executionId: string;
  readonly input: unknown;
  readonly outputs: Readonly<Record<string, unknown>>;
  /** How many times each step ran in this execution. */
  readonly visits: Readonly<Record<string, number>>;
  readonly launches: Readonly<Record<string, LaunchState>>;
  /** Finished child executions, by id. */
  readonly children: Readonly<Record<string, ChildSummary>>;
  readonly steps: readonly ExecutionStep[];
  readonly output: unknown;
}

/** A change to {@link RunState}; concurrent tasks' patches merge. @internal */
export interface RunPatch {
  readonly reset?: { readonly executionId: string; readonly input: unknown };
  readonly outputs?: Readonly<Record<string, unknown>>;
  readonly visits?: Readonly<Record<string, number>>;
  readonly children?: Readonly<Record<string, ChildSummary>>;
  readonly launches?: Readonly<
    Record<
      string,
      {
        readonly startedAt?: number;
        readonly branches?: number | undefined;
        readonly results?: Readonly<Record<string, BranchResult>>;
      }
    >
  >;
  readonly steps?: readonly ExecutionStep[];
  readonly output?: unknown;
}

const emptyRun: RunState = {
  executionId: "",
  input: undefined,
  outputs: {},
  visits: {},
  launches: {},
  children: {},
  steps: [],
  output: undefined,
};

function mergeLaunches(
  state: RunState["launches"],
  patch: NonNullable<RunPatch["launches"]>,
): Record<string, LaunchState> {
  const out: Record<string, LaunchState> = { ...state };
  for (const [id, change] of Object.entries(patch)) {
    const before = out[id] ?? { startedAt: change.startedAt ?? 0, results: {} };
    out[id] = {
      startedAt: change.startedAt ?? before.startedAt,
      branches: change.branches ?? before.branches,
      results: { ...before.results, ...(change.results ?? {}) },
    };
  }
  return out;
}

function applyRunPatch(state: RunState, patch: RunPatch): RunState {
  const base: RunState = patch.reset === undefined ? state : { ...emptyRun, ...patch.reset };
  return {
    ...base,
    outputs: patch.outputs === undefined ? base.outputs : { ...base.outputs, ...patch.outputs },
    visits: patch.visits === undefined ? base.visits : { ...base.visits, ...patch.visits },
    children: patch.children === undefined ? base.children : { ...base.children, ...patch.children },
    launches: patch.launches === undefined ? base.launches : mergeLaunches(base.launches, patch.launches),
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

/**
 * The agent visit under way in a flow's own (not a branch's) agent step: what its turns and tool calls
 * added so far. The step's conversation before the visit and its input stay where the flow keeps them.
 * @internal
 */
export interface AgentVisitState {
  readonly visit: number;
  readonly messages: readonly ChatMessage[];
  readonly steps: readonly ExecutionStep[];
  readonly loop: LoopState | undefined;
  readonly output: unknown;
}

/** A change to the visit under way: set it (null closes it), or add a tool call's messages and steps. @internal */
export type VisitPatch =
  | { readonly set: AgentVisitState | null }
  | {
      readonly add: { readonly messages?: readonly ChatMessage[]; readonly steps?: readonly ExecutionStep[] };
    };

// No visit is null, never undefined: LangGraph takes a channel's first update as it is, without the
// reducer, while the channel holds undefined.
function applyVisitPatch(state: AgentVisitState | null, patch: VisitPatch): AgentVisitState | null {
  if ("set" in patch) return patch.set;
  if (state === null) return null;
  return {
    ...state,
    messages: [...state.messages, ...(patch.add.messages ?? [])],
    steps: [...state.steps, ...(patch.add.steps ?? [])],
  };
}

/** The LangGraph state of every flow: conversations persist across a thread's executions. @internal */
export const FlowState = Annotation.Root({
  conversations: Annotation<Readonly<Record<string, readonly ChatMessage[]>>>({
    reducer: mergeConversations,
    default: () => ({}),
  }),
  run: Annotation<RunState, RunPatch>({ reducer: applyRunPatch, default: () => emptyRun }),
  visit: Annotation<AgentVisitState | null, VisitPatch>({ reducer: applyVisitPatch, default: () => null }),
});

/** A flow's state as nodes read it. @internal */
export type FlowStateValue = typeof FlowState.State;
/** What a node may return. @internal */
export type FlowStateUpdate = typeof FlowState.Update;
