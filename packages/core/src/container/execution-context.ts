import { AsyncLocalStorage } from "node:async_hooks";
import { NoExecutionContextError } from "../errors/runtime-errors.js";

/** The tenant an execution runs for; add fields of your own. */
export interface Tenant {
  readonly tenantId: string;
  readonly [field: string]: unknown;
}

/** The step that is running, when there is one. */
export interface StepContext {
  /** The graph node, e.g. `agent/refund-agent`. */
  readonly nodeId: string;
  /** The agent's name. */
  readonly agent?: string;
  /** The tool call's id, in a tool or a channel. */
  readonly callId?: string;
  /** The step's idempotency key: stable across re-entries of the same tool call. */
  readonly idempotencyKey?: string;
  /** The item of a per-item launch. */
  readonly itemIndex?: number;
}

/** Everything known about the running execution. */
export interface ExecutionFrame {
  readonly tenant: Tenant;
  readonly ownerId: string;
  readonly threadId: string;
  readonly executionId: string;
  readonly rootExecutionId: string;
  readonly workflow: { readonly name: string; readonly version: string };
  readonly env: string;
  readonly step: StepContext | undefined;
  /** Aborts when the step times out or the execution is cancelled. */
  readonly signal: AbortSignal;
  /**
   * @internal Hears what the run does as it happens (`app.stream`): model turns, tool calls, pauses.
   * Undefined when nobody listens, so a run that is not streamed builds no event.
   */
  readonly progress?: ((event: { readonly type: string }) => void) | undefined;
  /**
   * @internal Pauses answered just before this pass began (by the call that moves it: `app.resume`),
   * by pauseId, as that call stored them. The step waiting on one takes its entry instead of reading
   * the pause again: the take that follows is conditional, so an entry gone stale changes nothing. An
   * entry that is Taken was taken by that call under this pass's lease, in the commit that began it.
   */
  readonly answered?: Map<string, FramePause> | undefined;
  /**
   * @internal True in the pass that starts the execution: no step has a pause stored yet, so a step
   * creates its pause without looking it up first. Creating finds the stored one all the same (it is
   * find-or-create), so a pause there after all is used as stored.
   */
  readonly starting?: boolean | undefined;
  /** @internal The OpenTelemetry span this frame's spans nest under, when the run is traced. */
  readonly traceSpan?: unknown;
  /** The parallel-launch branches the current step runs under, outermost first; undefined outside any. */
  readonly branch?:
    | {
        readonly launches: readonly {
          readonly executionId: string;
          readonly launchId: string;
          readonly index: number;
          readonly itemIndex?: number | undefined;
        }[];
      }
    | undefined;
}

/**
 * @internal A pause record as a frame carries it (`ExecutionFrame.answered`): what this layer needs to
 * find it; the runtime puts whole pause records there.
 */
export interface FramePause {
  readonly tenantId: string;
  readonly pauseId: string;
  readonly idempotencyKey: string;
}

const storage = new AsyncLocalStorage<ExecutionFrame>();

/**
 * The running execution, injectable anywhere (`deps: [ExecutionContext]`). Its fields read the frame of
 * the execution the current call runs in, so a singleton service sees each execution's own tenant.
 *
 * @example
 * async send(ask) { await slack.post(`Refund for ${this.executionContext.tenant.tenantId}?`, ask.pauseId); }
 */
export class ExecutionContext {
  #frame(field: string): ExecutionFrame {
    const frame = storage.getStore();
    if (frame === undefined) throw new NoExecutionContextError(field);
    return frame;
  }
  get tenant(): Tenant {
    return this.#frame("tenant").tenant;
  }
  get ownerId(): string {
    return this.#frame("ownerId").ownerId;
  }
  get threadId(): string {
    return this.#frame("threadId").threadId;
  }
  get executionId(): string {
    return this.#frame("executionId").executionId;
  }
  get rootExecutionId(): string {
    return this.#frame("rootExecutionId").rootExecutionId;
  }
  get workflow(): ExecutionFrame["workflow"] {
    return this.#frame("workflow").workflow;
  }
  get env(): string {
    return this.#frame("env").env;
  }
  get step(): StepContext | undefined {
    return this.#frame("step").step;
  }
  get signal(): AbortSignal {
    return this.#frame("signal").signal;
  }
  /** True inside an execution. */
  get active(): boolean {
    return storage.getStore() !== undefined;
  }

  /** Runs `fn` inside `frame`. For the runtime and for tests of your own components. */
  static run<T>(frame: ExecutionFrame, fn: () => T): T {
    return storage.run(frame, fn);
  }

  /** The current frame, if any. */
  static current(): ExecutionFrame | undefined {
    return storage.getStore();
  }
}
