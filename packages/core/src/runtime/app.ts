import { randomUUID } from "node:crypto";
import type { AssembledApplication, AssembledFlow } from "../assembly/assembled-application.js";
import { assemble } from "../assembly/assemble.js";
import type { ApplicationOptions } from "../components/application.js";
import { type AnyClass, componentOf, describeClass } from "../components/component-registry.js";
import { Container } from "../container/container.js";
import { ExecutionContext, type ExecutionFrame, type Tenant } from "../container/execution-context.js";
import { parseDto } from "../dto/dto.js";
import { maskWith } from "../dto/sensitive.js";
import { AppClosedError, ExecutionCancelledError, ThreadBusyError, ThreadOwnerError } from "../errors/runtime-errors.js";
import { ConsoleLogger, LogLevel, type Logger } from "../logging/logger.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import { FENCE_CONFIG_KEY } from "../store/fence.js";
import type { Lease } from "../store/lease-repository.js";
import type { Store, StoreFactory } from "../store/store.js";
import { type Clock, type ClockTimer, SystemClock } from "../time/clock.js";
import { hours, toMilliseconds } from "../time/duration.js";
import { UnknownWorkflowStartError } from "./app-errors.js";
import { type CompiledFlow, compileFlow } from "./compile-flow.js";
import { defaultStoreFactory } from "./default-store.js";
import type { ExecutionEvents } from "./execution-events.js";
import type { ExecutionOutput } from "./execution-output.js";
import { ExecutionStatus } from "./execution-status.js";
import type { FlowStateValue } from "./flow-state.js";
import { ModelRegistry } from "./model-registry.js";
import type { RuntimeServices } from "./runtime-services.js";

/** How long an execution tree's lease lasts unless renewed. */
export const LEASE_TTL_MS = 30_000;
/** How often the recovery sweep runs, on the application's Clock. */
export const SWEEP_INTERVAL_MS = 30_000;

/** Options of {@link createApp}. */
export interface CreateAppOptions {
  /** The deployment, e.g. `dev` or `prod`; readable as `executionContext.env`. Default `AGBOSS_ENV`, else `dev`. */
  readonly env?: string;
  /** The store; overrides `@Application({ store })`. Default: the embedded SQLite store. */
  readonly store?: StoreFactory | Store;
  /** The application's time. Default: the wall clock. */
  readonly clock?: Clock;
  /** Where logs go. Default: warnings and errors to the console. */
  readonly logger?: Logger;
  /** Providers added to (or replacing) the application's, e.g. a different channel in tests. */
  readonly providers?: ApplicationOptions["providers"];
  /** @internal Used by the testing kit: every model id counts as served. */
  readonly modelsScripted?: boolean;
}

/** Options of `app.execute`. */
export interface ExecuteOptions {
  /** The conversation; a follow-up on the same id continues it. Default: a new random id. */
  readonly threadId?: string;
  /** Who starts it; the thread's owner. */
  readonly ownerId: string;
  /** Default `{ tenantId: "default" }`. */
  readonly tenant?: Tenant;
  /** Return the execution record as `result.record`. */
  readonly record?: boolean;
}

/** The value type of a start's input DTO. */
type StartInput<TStart> = TStart extends AnyClass ? Record<string, unknown> : never;

/** @internal What the testing kit reaches into. */
export interface AppInternals {
  readonly container: Container;
  readonly models: ModelRegistry;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly assembled: AssembledApplication;
}

const INTERNALS = Symbol.for("agboss.app.internals");

/** @internal The internals of an app, for the testing kit. */
export function appInternals(app: App): AppInternals {
  return (app as unknown as Record<symbol, AppInternals>)[INTERNALS] as AppInternals;
}

/** A running application. Create one per process with {@link createApp}, and `close()` it on shutdown. */
export class App {
  readonly #internals: AppInternals;
  readonly #graphs = new Map<AnyClass, CompiledFlow>();
  readonly #running = new Map<string, AbortController>();
  readonly #ownsStore: boolean;
  readonly #env: string;
  readonly #holder = randomUUID();
  readonly #events: ExecutionEvents;
  #sweep: ClockTimer | undefined;
  #closed = false;

  /** @internal Use {@link createApp}. */
  constructor(args: { internals: AppInternals; ownsStore: boolean; env: string; events: ExecutionEvents }) {
    this.#internals = args.internals;
    this.#ownsStore = args.ownsStore;
    this.#env = args.env;
    this.#events = args.events;
    Object.defineProperty(this, INTERNALS, { value: args.internals, enumerable: false });
    const services: RuntimeServices = args.internals;
    for (const [startClass, flow] of args.internals.assembled.flows) {
      this.#graphs.set(startClass, compileFlow(flow, services, args.internals.store.checkpointer));
    }
  }

  /** The application's name. */
  get name(): string {
    return this.#internals.assembled.name;
  }

  /** The store the application runs on. */
  get store(): Store {
    return this.#internals.store;
  }

  /** The container's instance for a token, e.g. a service you registered. */
  get<T>(token: AnyClass<T>): T {
    return this.#internals.container.get(token);
  }

  /**
   * Starts a workflow at `start` with `input` (validated against the start's DTO before anything is
   * stored) and runs it until it finishes or rests paused.
   */
  async execute<TStart extends AnyClass>(
    start: TStart,
    input: StartInput<TStart>,
    options: ExecuteOptions,
  ): Promise<ExecutionOutput> {
    this.#assertOpen();
    const flow = this.#flowOf(start);
    const value = parseDto(flow.start.input, input, `the input of ${flow.start.name}`);
    const tenant = options.tenant ?? { tenantId: "default" };
    const threadId = options.threadId ?? randomUUID();
    const { store, clock } = this.#internals;
    const thread = await store.threads.findByTenantIdAndThreadId(tenant.tenantId, threadId);
    if (thread !== undefined) {
      if (thread.ownerId !== options.ownerId) throw new ThreadOwnerError(threadId);
      if (thread.workflowName !== flow.workflow.name) {
        throw new ThreadBusyError(threadId, `it belongs to workflow "${thread.workflowName}"; start ${flow.workflow.name} on another thread.`);
      }
      const latest = await store.executions.findByTenantIdAndExecutionId(tenant.tenantId, thread.latestExecutionId);
      if (latest?.status === ExecutionStatus.Paused) {
        throw new ThreadBusyError(threadId, `execution ${latest.executionId} is paused; answer its pauses with app.resume or app.cancel the thread.`);
      }
    }
    const leaseKey = `${tenant.tenantId}/${threadId}`;
    const lease = await store.leases.acquire({ key: leaseKey, holder: this.#holder, now: clock.now(), ttlMs: LEASE_TTL_MS });
    if (lease === undefined) throw new ThreadBusyError(threadId, "another call is moving it right now; retry when it returns.");
    const executionId = randomUUID();
    const startedAt = clock.now();
    const frame: ExecutionFrame = {
      tenant,
      ownerId: options.ownerId,
      threadId,
      executionId,
      rootExecutionId: executionId,
      workflow: { name: flow.workflow.name, version: flow.workflow.version },
      env: this.#env,
      step: undefined,
      signal: new AbortController().signal,
    };
    await store.threads.save({
      tenantId: tenant.tenantId,
      threadId,
      ownerId: options.ownerId,
      workflowName: flow.workflow.name,
      latestExecutionId: executionId,
      createdAt: thread?.createdAt ?? startedAt,
      updatedAt: startedAt,
    });
    const base = { flow, frame, startedAt, input: value };
    await this.#saveRecord(this.#record(base, ExecutionStatus.Running, undefined, undefined));
    await this.#emit("onExecutionStart", { ...this.#eventBase(frame), input: maskWith(flow.start.input.schema, value) });
    return this.#runPass(base, lease, { run: { reset: { executionId, input: value } } }, options.record === true);
  }

  /**
   * Cancels the conversation on `threadId`: a pass running in this process is aborted and the
   * execution is recorded as cancelled. Cancelling a finished thread does nothing.
   */
  async cancel(threadId: string, options: { tenantId?: string } = {}): Promise<void> {
    this.#assertOpen();
    const tenantId = options.tenantId ?? "default";
    const { store, clock } = this.#internals;
    const thread = await store.threads.findByTenantIdAndThreadId(tenantId, threadId);
    if (thread === undefined) return;
    this.#running.get(`${tenantId}/${threadId}`)?.abort(new ExecutionCancelledError(threadId));
    const latest = await store.executions.findByTenantIdAndExecutionId(tenantId, thread.latestExecutionId);
    if (latest === undefined || latest.status === ExecutionStatus.Completed || latest.status === ExecutionStatus.Failed) return;
    const record = latest.record as ExecutionRecord;
    await store.executions.save({
      ...latest,
      status: ExecutionStatus.Cancelled,
      updatedAt: clock.now(),
      record: { ...record, status: ExecutionStatus.Cancelled, finishedAt: new Date(clock.now()).toISOString() },
    });
  }

  /** The stored record of an execution. */
  async record(executionId: string, options: { tenantId?: string } = {}): Promise<ExecutionRecord | undefined> {
    const stored = await this.#internals.store.executions.findByTenantIdAndExecutionId(options.tenantId ?? "default", executionId);
    return stored?.record as ExecutionRecord | undefined;
  }

  /** Stops the sweep, calls every `onStop`, and closes the store if the application opened it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sweep?.cancel();
    for (const controller of this.#running.values()) controller.abort(new AppClosedError());
    try {
      await this.#internals.container.stop();
    } finally {
      if (this.#ownsStore) await this.#internals.store.close();
    }
  }

  /** @internal Starts the recovery sweep. */
  startSweep(retentionMs: number): void {
    const { clock, store, logger } = this.#internals;
    const tick = async () => {
      if (this.#closed) return;
      try {
        const removed = await store.pauses.deleteResolvedBefore(clock.now() - retentionMs);
        if (removed > 0) logger.log({ level: LogLevel.Debug, event: "sweep.pauses-removed", message: `removed ${removed} resolved pauses`, fields: { removed }, at: clock.now() });
      } catch (error) {
        logger.log({ level: LogLevel.Error, event: "sweep.failed", message: String(error), fields: {}, at: clock.now() });
      }
      if (!this.#closed) this.#sweep = clock.setTimer(SWEEP_INTERVAL_MS, () => void tick());
    };
    this.#sweep = clock.setTimer(SWEEP_INTERVAL_MS, () => void tick());
  }

  async #runPass(
    base: { flow: AssembledFlow; frame: ExecutionFrame; startedAt: number; input: unknown },
    lease: Lease,
    command: unknown,
    withRecord: boolean,
  ): Promise<ExecutionOutput> {
    const { store, clock } = this.#internals;
    const graph = this.#graphs.get(base.flow.start.cls) as CompiledFlow;
    const controller = new AbortController();
    const key = lease.key;
    this.#running.set(key, controller);
    let renewal: ClockTimer | undefined;
    const renew = () => {
      renewal = clock.setTimer(LEASE_TTL_MS / 3, () => {
        void store.leases.renew({ fence: lease, now: clock.now(), ttlMs: LEASE_TTL_MS }).then((held) => {
          if (held) renew();
          else controller.abort(new Error(`lease ${key} lost`));
        });
      });
    };
    renew();
    const frame = { ...base.frame, signal: controller.signal };
    try {
      const state = (await ExecutionContext.run(frame, () =>
        graph.invoke(command as never, {
          configurable: { thread_id: key, [FENCE_CONFIG_KEY]: { key: lease.key, epoch: lease.epoch } },
          signal: controller.signal,
          recursionLimit: 10_000,
        }),
      )) as FlowStateValue;
      const record = this.#record(base, ExecutionStatus.Completed, state, undefined);
      await this.#saveRecord(record);
      const output: ExecutionOutput = {
        status: ExecutionStatus.Completed,
        output: state.run.output,
        threadId: frame.threadId,
        executionId: frame.executionId,
        pending: [],
        ...(withRecord ? { record } : {}),
      };
      await this.#emit("onExecutionFinish", { ...this.#eventBase(frame), output });
      return output;
    } catch (error) {
      const cancelled = controller.signal.aborted;
      const state = await graph.getState({ configurable: { thread_id: key } }).catch(() => undefined);
      const status = cancelled ? ExecutionStatus.Cancelled : ExecutionStatus.Failed;
      await this.#saveRecord(this.#record(base, status, state?.values as FlowStateValue | undefined, error)).catch(() => undefined);
      const thrown = cancelled && controller.signal.reason instanceof Error ? controller.signal.reason : error;
      await this.#emit("onExecutionError", { ...this.#eventBase(frame), error: thrown });
      throw thrown;
    } finally {
      renewal?.cancel();
      this.#running.delete(key);
      await store.leases.release(lease);
    }
  }

  #record(
    base: { flow: AssembledFlow; frame: ExecutionFrame; startedAt: number; input: unknown },
    status: ExecutionStatus,
    state: FlowStateValue | undefined,
    error: unknown,
  ): ExecutionRecord {
    const { frame, flow } = base;
    const ownRun = state?.run.executionId === frame.executionId ? state.run : undefined;
    const steps = ownRun?.steps ?? [];
    const usage = { modelCalls: 0, inputTokens: 0, outputTokens: 0 };
    for (const step of steps) {
      if (step.type !== "model") continue;
      usage.modelCalls += 1;
      usage.inputTokens += step.usage?.inputTokens ?? 0;
      usage.outputTokens += step.usage?.outputTokens ?? 0;
    }
    const done = status !== ExecutionStatus.Running && status !== ExecutionStatus.Paused;
    return {
      tenantId: frame.tenant.tenantId,
      executionId: frame.executionId,
      rootExecutionId: frame.rootExecutionId,
      threadId: frame.threadId,
      ownerId: frame.ownerId,
      workflow: frame.workflow,
      start: flow.start.name,
      status,
      startedAt: new Date(base.startedAt).toISOString(),
      finishedAt: done ? new Date(this.#internals.clock.now()).toISOString() : undefined,
      input: maskWith(flow.start.input.schema, base.input),
      output: ownRun?.output === undefined ? undefined : maskWith(flow.finish.output.schema, ownRun.output),
      error:
        error === undefined
          ? undefined
          : {
              code: (error as { code?: string }).code,
              name: error instanceof Error ? error.name : "Error",
              message: error instanceof Error ? error.message : String(error),
            },
      steps,
      usage,
    };
  }

  async #saveRecord(record: ExecutionRecord): Promise<void> {
    await this.#internals.store.executions.save({
      tenantId: record.tenantId,
      executionId: record.executionId,
      rootExecutionId: record.rootExecutionId,
      parentExecutionId: undefined,
      threadId: record.threadId,
      workflowName: record.workflow.name,
      status: record.status,
      startedAt: Date.parse(record.startedAt),
      updatedAt: this.#internals.clock.now(),
      record,
    });
  }

  #eventBase(frame: ExecutionFrame) {
    return {
      tenantId: frame.tenant.tenantId,
      threadId: frame.threadId,
      executionId: frame.executionId,
      workflow: frame.workflow.name,
      at: new Date(this.#internals.clock.now()).toISOString(),
    };
  }

  async #emit<K extends keyof ExecutionEvents>(name: K, event: Parameters<NonNullable<ExecutionEvents[K]>>[0]): Promise<void> {
    const handler = this.#events[name] as ((e: typeof event) => unknown) | undefined;
    if (handler === undefined) return;
    try {
      await handler.call(this.#events, event);
    } catch (error) {
      const { logger, clock } = this.#internals;
      logger.log({ level: LogLevel.Error, event: "app.event-handler-failed", message: `${name} threw: ${String(error)}`, fields: { handler: name }, at: clock.now() });
    }
  }

  #flowOf(start: AnyClass): AssembledFlow {
    const flow = this.#internals.assembled.flows.get(start);
    if (flow !== undefined) return flow;
    const known = [...this.#internals.assembled.flows.values()].map((f) => f.start.cls.name);
    throw new UnknownWorkflowStartError(describeClass(start), known);
  }

  #assertOpen(): void {
    if (this.#closed) throw new AppClosedError();
  }
}

/**
 * Assembles the application, checks every rule at once, opens its store, creates its container
 * (`onInit` then `onStart`), and starts the 30-second recovery sweep. Call it once per process.
 *
 * @example
 * const app = await createApp(RefundApplication, { env: "prod", store: sqliteStore({ path: "/var/lib/refunds.sqlite" }) });
 */
export async function createApp(application: AnyClass, options: CreateAppOptions = {}): Promise<App> {
  const clock = options.clock ?? new SystemClock();
  const logger = options.logger ?? new ConsoleLogger({ level: LogLevel.Warn });
  const appOptions = componentOf<ApplicationOptions>(application)?.options;
  const container = new Container([...(appOptions?.providers ?? []), ...(options.providers ?? [])]);
  const assembled = assemble(application, container, { modelsScripted: options.modelsScripted === true });
  const configured = options.store ?? assembled.options.store ?? (await defaultStoreFactory());
  const ownsStore = typeof configured === "function";
  const store = typeof configured === "function" ? await configured({ appName: assembled.name, clock, logger }) : configured;
  const models = new ModelRegistry(container, assembled.modelProviders);
  try {
    await container.start();
  } catch (error) {
    if (ownsStore) await store.close();
    throw error;
  }
  const events = container.get(application) as ExecutionEvents;
  const app = new App({
    internals: { container, models, clock, logger, store, assembled },
    ownsStore,
    env: options.env ?? process.env.AGBOSS_ENV ?? "dev",
    events,
  });
  app.startSweep(toMilliseconds(assembled.options.pauseRecordRetention ?? hours(24)));
  return app;
}
