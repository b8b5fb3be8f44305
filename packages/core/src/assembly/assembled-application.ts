import type { ExpiryOutcome } from "../channels/pause-deadlines.js";
import type { AgentOptions } from "../components/agent.js";
import type { ApplicationOptions } from "../components/application.js";
import type { ToolOptions } from "../components/tool.js";
import type { AnyClass } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import type { JoinErrorHandler, LaunchOptions } from "../flow/flow-definition.js";
import type { Quorum } from "../flow/quorum-options.js";
import type { ModelProviderOptions } from "../models/model-provider.js";
import type { PauseAnswerer } from "../pauses/pause-status.js";

/** @internal The channel a tool names, resolved. */
export interface AssembledChannel {
  /** The class the tool names: a role, or a concrete channel. */
  readonly cls: AnyClass;
  readonly name: string;
  readonly answeredBy: PauseAnswerer;
  /** The role's reply interpreter, if any. */
  readonly replyInterpreter: AnyClass | undefined;
  /** A question role's answer DTO; undefined for an approval role or a concrete channel. */
  readonly answer: DtoClass | undefined;
  /**
   * The deadlines of its pauses, when it is asked as an escalation (the role's own); the channel a tool
   * names first keeps them on the tool, where the tool's overrides apply.
   */
  readonly deadlines?: AssembledDeadlines | undefined;
}

/** @internal A role's deadlines, checked, in milliseconds. */
export interface AssembledDeadlines {
  readonly remindEveryMs?: number | undefined;
  /** The role asked instead, with its own deadlines. */
  readonly escalate?: { readonly afterMs: number; readonly to: AssembledChannel } | undefined;
  /**
   * Counted from this role's question, or, when `carried`, the expiry of the role that escalated to this
   * one (declared by none of its own), kept as it was.
   */
  readonly expire?:
    | { readonly afterMs: number; readonly outcome: ExpiryOutcome; readonly carried?: boolean }
    | undefined;
}

/** @internal A tool as the runtime uses it. */
export interface AssembledTool {
  readonly cls: AnyClass;
  readonly name: string;
  readonly options: ToolOptions;
  readonly channel: AssembledChannel | undefined;
  /** The deadlines of its channel's pauses: the role's, overridden field by field by the tool's. */
  readonly deadlines?: AssembledDeadlines | undefined;
}

/** @internal An agent with its tools resolved. */
export interface AssembledAgent {
  readonly cls: AnyClass;
  readonly name: string;
  readonly options: AgentOptions;
  readonly tools: ReadonlyMap<string, AssembledTool>;
}

/** @internal One step of a flow, with its graph node id. */
export type AssembledStep =
  | { readonly kind: "agent"; readonly nodeId: string; readonly agent: AssembledAgent }
  | { readonly kind: "workflow"; readonly nodeId: string; readonly start: AnyClass }
  | {
      readonly kind: "parallel";
      readonly nodeId: string;
      readonly agents: readonly AssembledAgent[];
      /** Child flows' starts, when the branches are child executions. */
      readonly workflows: readonly AnyClass[];
      readonly items: ((input: unknown) => readonly unknown[]) | undefined;
      readonly options: LaunchOptions;
      /** The launch's quorum, when it joins by one. */
      readonly quorum?: Quorum | undefined;
      readonly onJoinError: readonly {
        readonly type: abstract new (...args: never[]) => unknown;
        readonly handle: JoinErrorHandler;
      }[];
    };

/** @internal A flow ready to compile. */
export interface AssembledFlow {
  readonly workflow: { readonly cls: AnyClass; readonly name: string; readonly version: string };
  readonly start: { readonly cls: AnyClass; readonly name: string; readonly input: DtoClass };
  readonly steps: readonly AssembledStep[];
  readonly finish: { readonly cls: AnyClass; readonly name: string; readonly output: DtoClass };
}

/** @internal The whole application, checked. */
export interface AssembledApplication {
  readonly cls: AnyClass;
  readonly name: string;
  readonly options: ApplicationOptions;
  readonly flows: ReadonlyMap<AnyClass, AssembledFlow>;
  readonly agents: ReadonlyMap<AnyClass, AssembledAgent>;
  readonly modelProviders: readonly { readonly cls: AnyClass; readonly options: ModelProviderOptions }[];
}
