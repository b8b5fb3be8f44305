import { Annotation } from "@langchain/langgraph";
import type { ChatMessage } from "../models/chat-model.js";
import type { BranchPath } from "../records/branch-path.js";
import type { ExecutionStep } from "../records/execution-record.js";
import type { LoopState } from "./flow-state.js";

const last = <T>(_a: T, b: T): T => b;
const append = <T>(a: readonly T[], b: readonly T[]): readonly T[] => [...a, ...b];

/**
 * The state of one agent visit, run as a LangGraph subgraph inside its step's task: a paused tool call
 * interrupts only this visit, and its finished turns are never replayed.
 * @internal
 */
export const AgentState = Annotation.Root({
  /** The step's node id in the flow (a branch's includes its launch). */
  nodeId: Annotation<string>({ reducer: last, default: () => "" }),
  /** The visit of this step in the execution (1 for the first). */
  visit: Annotation<number>({ reducer: last, default: () => 1 }),
  branch: Annotation<BranchPath | undefined>({ reducer: last, default: () => undefined }),
  /** What the step works on. */
  input: Annotation<unknown>({ reducer: last, default: () => undefined }),
  /** The agent's conversation on this thread before this visit. */
  history: Annotation<readonly ChatMessage[]>({ reducer: last, default: () => [] }),
  /** The messages this visit added. */
  messages: Annotation<readonly ChatMessage[]>({ reducer: append, default: () => [] }),
  loop: Annotation<LoopState | undefined>({ reducer: last, default: () => undefined }),
  steps: Annotation<readonly ExecutionStep[]>({ reducer: append, default: () => [] }),
  output: Annotation<unknown>({ reducer: last, default: () => undefined }),
});

/** An agent visit's state as nodes read it. @internal */
export type AgentStateValue = typeof AgentState.State;
/** What an agent node may return. @internal */
export type AgentStateUpdate = typeof AgentState.Update;
