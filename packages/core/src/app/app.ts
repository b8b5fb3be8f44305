import { randomUUID } from "node:crypto";
import { Command } from "@langchain/langgraph";
import {
  checkAnswerKind,
  checkCredential,
  checkResumeRequest,
  notPaused,
} from "../answering/answer-checks.js";
import type {
  AnswerOptions,
  AnswerReceipt,
  ResumeCredential,
  ResumeOptions,
  ResumeRequest,
} from "../answering/answer-request.js";
import { validatePauseAnswer } from "../answering/answer-validation.js";
import { listPauses, type PauseInboxQuery, type PauseSummary } from "../answering/inbox.js";
import { closePending, type PauseStep, pendingOf, toolOfPause, writeAudit } from "../answering/pause-book.js";
import { interpretReply } from "../answering/reply-reading.js";
import { assemble } from "../assembly/assemble.js";
import type { AssembledApplication, AssembledFlow } from "../assembly/assembled-application.js";
import { type BudgetLimits, checkBudgetLimits } from "../budgets/budget.js";
import type { ApplicationOptions } from "../components/application.js";
import { type AnyClass, componentOf, describeClass } from "../container/component-registry.js";
import { Container } from "../container/container.js";
import { ExecutionContext, type ExecutionFrame, type Tenant } from "../container/execution-context.js";
import { CLOCK, LOGGER } from "../container/well-known-tokens.js";
import { parseDto } from "../dto/dto.js";
import { maskWith } from "../dto/sensitive.js";
import { hasCause } from "../errors/agboss-error.js";
import { StoreUnavailableError, UnknownWorkflowStartError } from "../errors/app-errors.js";
import {
  AppClosedError,
  ExecutionCancelledError,
  ThreadBusyError,
  ThreadOwnerError,
} from "../errors/runtime-errors.js";
import { childRecords, withPauses } from "../execution/child-records.js";
import { ExecutionEndedError, ExecutionInterruptedError } from "../execution/execution-errors.js";
import type { ExecutionEvents } from "../execution/execution-events.js";
import type { ExecutionOutput } from "../execution/execution-output.js";
import { type CompiledFlow, compileFlow } from "../graph/compile-flow.js";
import { decidedLaunches, type FlowSnapshot } from "../graph/decided-launches.js";
import { finishOutput } from "../graph/finish-output.js";
import type { FlowStateValue } from "../graph/flow-state.js";
import { ConsoleLogger, type Logger, LogLevel } from "../logging/logger.js";
import { ModelRegistry } from "../models/model-registry.js";
import { ReplyInterpreterMissingError, UnknownPauseError } from "../pauses/pause-errors.js";
import type { PauseAnswer, PauseRecord } from "../pauses/pause-record.js";
import { PauseAnswerer, PauseResolution, PauseStatus } from "../pauses/pause-status.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import { ExecutionStatus } from "../records/execution-status.js";
import type { PauseEntry } from "../records/pause-entry.js";
import { rememberExecutionBudget } from "../services/budget-guard.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { keepLeaseAlive, LEASE_TTL_MS } from "../services/tree-lease.js";
import { FENCE_CONFIG_KEY, type Fence, LeaseLostError } from "../store/fence.js";
import type { Lease } from "../store/lease-repository.js";
import type { Store, StoreFactory } from "../store/store.js";
import type { StoredExecution } from "../store/stored-execution.js";
import { type Clock, type ClockTimer, SystemClock } from "../time/clock.js";
import { hours, toMilliseconds } from "../time/duration.js";
import { defaultStoreFactory } from "./default-store.js";

export { LEASE_TTL_MS } from "../services/tree-lease.js";
/** How often the recovery sweep runs, on the application's Clock. */
export const SWEEP_INTERVAL_MS = 30_000;
/** How many trees the sweep reads at a time. */
const SWEEP_PAGE = 100;
/** How long an answered pause may wait for its own resumer before the sweep takes it over. */
const RECOVERY_GRACE_MS = 1_000;

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
  /** Limits on the model spend of this execution tree; replaces the workflow's `executionBudget`. */
  readonly budget?: BudgetLimits;
}

/** The value type of a start's input DTO. */
type StartInput<TStart> = TStart extends AnyClass ? Record<string, unknown> : never;

/** @internal What the testing kit reaches into. */
export interface AppInternals extends RuntimeServices {
  readonly container: Container;
  readonly models: ModelRegistry;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly assembled: AssembledApplication;
}

const INTERNALS = Symbol.for("agboss.app.internals");

/** A pass's command meaning "resume every resolved pause of the tree". */
const CONTINUE = Symbol("continue");

/** What a pass needs of an execution tree. */
interface Tree {
  readonly flow: AssembledFlow;
  readonly frame: ExecutionFrame;
  readonly startedAt: number;
  readonly input: unknown;
  readonly budget?: BudgetLimits | undefined;
  /** The root execution as stored when the tree was read back (a resume, a recovery); undefined on a start. */
  readonly stored?: StoredExecution | undefined;
}

/** @internal The internals of an app, for the testing kit. */
export function appInternals(app: App): AppInternals {
  return (app as unknown as Record<symbol, AppInternals>)[INTERNALS] as AppInternals;
}

/** A running application. Create one per process with {@link createApp}, and `close()` it on shutdown. */
export class App {
  readonly #internals: AppInternals;
  readonly #graphs = new Map<AnyClass, CompiledFlow>();
  readonly #running = new Map<string, AbortController>();
  readonly #background = new Set<Promise<void>>();
  readonly #ownsStore: boolean;
  readonly #env: string;
  readonly #holder = randomUUID();
  #acquisitions = 0;
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
      this.#graphs.set(
        startClass,
        compileFlow(
          flow,
          services,
          args.internals.store.checkpointer,
          (start) => args.internals.assembled.flows.get(start) as AssembledFlow,
        ),
      );
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
    const budget = options.budget === undefined ? undefined : checkBudgetLimits("budget", options.budget);
    const tenant = options.tenant ?? { tenantId: "default" };
    const threadId = options.threadId ?? randomUUID();
    const { store, clock } = this.#internals;
    const thread = await store.threads.findByTenantIdAndThreadId(tenant.tenantId, threadId);
    if (thread !== undefined) {
      if (thread.ownerId !== options.ownerId) throw new ThreadOwnerError(threadId);
      if (thread.workflowName !== flow.workflow.name) {
        throw new ThreadBusyError(
          threadId,
          `it belongs to workflow "${thread.workflowName}"; start ${flow.workflow.name} on another thread.`,
        );
      }
      const latest = await store.executions.findByTenantIdAndExecutionId(
        tenant.tenantId,
        thread.latestExecutionId,
      );
      if (latest?.status === ExecutionStatus.Paused) {
        throw new ThreadBusyError(
          threadId,
          `execution ${latest.executionId} is paused; answer its pauses with app.resume or app.cancel the thread.`,
        );
      }
    }
    const leaseKey = `${tenant.tenantId}/${threadId}`;
    const lease = await store.leases.acquire({
      key: leaseKey,
      holder: this.#nextHolder(),
      now: clock.now(),
      ttlMs: LEASE_TTL_MS,
    });
    if (lease === undefined)
      throw new ThreadBusyError(threadId, "another call is moving it right now; retry when it returns.");
    const executionId = randomUUID();
    rememberExecutionBudget(this.#internals, tenant.tenantId, executionId, budget);
    const startedAt = clock.now();
    const tree: Tree = {
      flow,
      startedAt,
      input: value,
      budget,
      frame: {
        tenant,
        ownerId: options.ownerId,
        threadId,
        executionId,
        rootExecutionId: executionId,
        workflow: { name: flow.workflow.name, version: flow.workflow.version },
        env: this.#env,
        step: undefined,
        signal: new AbortController().signal,
      },
    };
    try {
      // Independent writes issued together can share one commit.
      await Promise.all([
        store.threads.save({
          tenantId: tenant.tenantId,
          threadId,
          ownerId: options.ownerId,
          workflowName: flow.workflow.name,
          latestExecutionId: executionId,
          createdAt: thread?.createdAt ?? startedAt,
          updatedAt: startedAt,
        }),
        this.#saveRecord(this.#record(tree, ExecutionStatus.Running, undefined, undefined, [])),
      ]);
    } catch (error) {
      await store.leases.release(lease);
      throw error;
    }
    await this.#emit("onExecutionStart", {
      ...this.#eventBase(tree.frame),
      input: maskWith(flow.start.input.schema, value),
    });
    return this.#pass(
      tree,
      lease,
      { run: { reset: { executionId, input: value } } },
      options.record === true,
    );
  }

  /**
   * Answers a pause by its id, from any instance sharing the store: with a decision, or with a
   * person's free text for the role's reply interpreter. Phase 1 records the answer atomically
   * (Pending → Resolved); phase 2 moves the tree under its lease, taking every resolved pause.
   *
   * @example
   * await app.resume({ pauseId, decision: { approved: true } }, { tenantId: "acme", answeredBy: "manager-17" });
   */
  async resume(request: ResumeRequest, options: ResumeOptions): Promise<ExecutionOutput> {
    const { resolved, responder } = await this.#recordAnswer(request, options);
    const tenantId = resolved.tenantId;
    // The audit entry and the lease are independent: issued together, they can share a commit.
    const [, lease] = await Promise.all([
      writeAudit(this.#internals, { ...resolved, resolution: PauseResolution.Replied }),
      this.#acquireWaiting(`${tenantId}/${resolved.threadId}`),
    ]);
    return this.#moveAnswered(lease, resolved, responder, options.record === true);
  }

  /**
   * Records an answer and returns as soon as it is stored — phase 1 of {@link resume} — while this
   * process moves the tree on in the background. For webhooks that must reply fast (Slack wants an
   * answer within 3 s): once `answer` returns, the answer is durable and in the audit trail; if this
   * process dies before the tree moved, the sweep of any instance takes the answered pause. Errors of
   * the background move are logged (`answer.move-failed`) and recorded on the execution, never thrown
   * here. `app.idle()` waits for the moves in flight; `close()` stops them.
   *
   * @example
   * const receipt = await app.answer({ pauseId, decision: { approved: true } }, { tenantId: "acme", answeredBy: "U024BE7LH" });
   */
  async answer(request: ResumeRequest, options: AnswerOptions): Promise<AnswerReceipt> {
    const { resolved, responder } = await this.#recordAnswer(request, options);
    const { tenantId } = resolved;
    await writeAudit(this.#internals, { ...resolved, resolution: PauseResolution.Replied });
    const moving = (async () => {
      const lease = await this.#acquireWaiting(`${tenantId}/${resolved.threadId}`);
      await this.#moveAnswered(lease, resolved, responder, false);
    })().catch((error: unknown) => {
      if (error instanceof AppClosedError) return;
      const { logger, clock } = this.#internals;
      logger.log({
        level: LogLevel.Warn,
        event: "answer.move-failed",
        message: `moving execution ${resolved.rootExecutionId} after an answer failed: ${error instanceof Error ? error.message : String(error)}`,
        fields: { tenantId, executionId: resolved.executionId, rootExecutionId: resolved.rootExecutionId },
        at: clock.now(),
      });
    });
    this.#background.add(moving);
    void moving.finally(() => this.#background.delete(moving));
    return {
      pauseId: resolved.pauseId,
      threadId: resolved.threadId,
      executionId: resolved.executionId,
      resolvedAt: new Date(resolved.resolvedAt ?? this.#internals.clock.now()).toISOString(),
    };
  }

  /** Resolves when the trees this process moves in the background after {@link answer} have all moved. */
  async idle(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }

  /** Phase 1: checks the request and the credential, reads a reply, and records the answer (Pending → Resolved). */
  async #recordAnswer(
    request: ResumeRequest,
    options: ResumeCredential & { readonly tenantId?: string },
  ): Promise<{ resolved: PauseRecord; responder: string }> {
    this.#assertOpen();
    const shape = checkResumeRequest(request);
    const tenantId = options.tenantId ?? "default";
    const { store, clock, assembled } = this.#internals;
    const pause = await store.pauses.findByTenantIdAndPauseId(tenantId, shape.pauseId);
    if (pause === undefined) throw new UnknownPauseError(shape.pauseId);
    const responder = checkCredential(pause, options);
    if (pause.status !== PauseStatus.Pending) throw notPaused(pause);
    const tool = toolOfPause(assembled, pause);
    if (tool === undefined) throw new UnknownPauseError(shape.pauseId);
    let answer: PauseAnswer;
    if (shape.reply !== undefined) {
      const interpreter = tool.channel?.replyInterpreter;
      if (interpreter === undefined) throw new ReplyInterpreterMissingError(pause.pauseId, pause.channel);
      const read = await interpretReply(this.#internals, { pause, tool, interpreter, reply: shape.reply });
      answer = {
        ...read.value,
        responder,
        reply: shape.reply,
        ...(read.cost === undefined ? {} : { cost: read.cost }),
      };
    } else {
      checkAnswerKind(pause, tool, shape);
      answer = { ...validatePauseAnswer(tool, shape.decision ?? shape.answer), responder };
    }
    const resolved = await store.pauses.resolve(tenantId, pause.pauseId, answer, clock.now());
    if (resolved === undefined) {
      throw notPaused((await store.pauses.findByTenantIdAndPauseId(tenantId, pause.pauseId)) ?? pause);
    }
    return { resolved, responder };
  }

  /** Phase 2: reads the answered tree under its lease, marks it running, and moves it, taking every answered pause. */
  async #moveAnswered(
    lease: Lease,
    resolved: PauseRecord,
    responder: string,
    withRecord: boolean,
  ): Promise<ExecutionOutput> {
    let tree: Tree;
    try {
      // Read under the lease: a holder that ran while this call waited may have ended the tree.
      tree = await this.#treeOf(resolved.tenantId, resolved.rootExecutionId);
      // The durable trace of phase 2: from here on, a tree whose holder dies is found by the sweep as
      // running once its lease lapses, whatever its pauses' states (a Taken pause is no longer Resolved).
      await this.#markRunning(tree, lease);
    } catch (error) {
      await this.#internals.store.leases.release(lease).catch(() => undefined);
      throw error;
    }
    await this.#emit("onExecutionResume", {
      ...this.#eventBase(tree.frame),
      pauseId: resolved.answeredBy === PauseAnswerer.ThreadOwner ? resolved.pauseId : undefined,
      answeredBy: responder,
    });
    return this.#pass(tree, lease, CONTINUE, withRecord);
  }

  /** Records the root execution as running, under the tree's lease (fenced). */
  async #markRunning(tree: Tree, lease: Lease): Promise<void> {
    const stored = tree.stored;
    if (stored === undefined || stored.status !== ExecutionStatus.Paused) return;
    const record = stored.record as ExecutionRecord;
    await this.#internals.store.executions.save(
      {
        ...stored,
        status: ExecutionStatus.Running,
        updatedAt: this.#internals.clock.now(),
        record: { ...record, status: ExecutionStatus.Running, finishedAt: undefined },
      },
      lease,
    );
  }

  /** The application's pauses, for an inbox or an admin panel. A Channel pause's id is never shown. */
  readonly pauses = {
    list: async (query: PauseInboxQuery): Promise<PauseSummary[]> => {
      const { store, assembled } = this.#internals;
      return listPauses(store, assembled, query);
    },
  };

  /**
   * Cancels the conversation on `threadId`: its pending pauses are withdrawn (resolution Cancelled,
   * each channel told once), a pass running in this process is aborted, and the execution is recorded
   * as cancelled. Cancelling a finished thread does nothing.
   */
  async cancel(threadId: string, options: { tenantId?: string } = {}): Promise<void> {
    this.#assertOpen();
    const tenantId = options.tenantId ?? "default";
    const { store, clock } = this.#internals;
    const thread = await store.threads.findByTenantIdAndThreadId(tenantId, threadId);
    if (thread === undefined) return;
    this.#running.get(`${tenantId}/${threadId}`)?.abort(new ExecutionCancelledError(threadId));
    const latest = await store.executions.findByTenantIdAndExecutionId(tenantId, thread.latestExecutionId);
    if (
      latest === undefined ||
      latest.status === ExecutionStatus.Completed ||
      latest.status === ExecutionStatus.Failed
    )
      return;
    await closePending(this.#internals, tenantId, latest.rootExecutionId, PauseResolution.Cancelled);
    const record = latest.record as ExecutionRecord;
    await store.executions.save({
      ...latest,
      status: ExecutionStatus.Cancelled,
      updatedAt: clock.now(),
      record: {
        ...record,
        status: ExecutionStatus.Cancelled,
        finishedAt: new Date(clock.now()).toISOString(),
      },
    });
  }

  /** The stored record of an execution, with its audit trail. */
  async record(
    executionId: string,
    options: { tenantId?: string } = {},
  ): Promise<ExecutionRecord | undefined> {
    const tenantId = options.tenantId ?? "default";
    const stored = await this.#internals.store.executions.findByTenantIdAndExecutionId(tenantId, executionId);
    if (stored === undefined) return undefined;
    const record = stored.record as ExecutionRecord;
    const pauses = await this.#auditOf(tenantId, stored.rootExecutionId);
    return { ...record, pauses, children: withPauses(record.children ?? [], pauses) };
  }

  /** Stops the sweep, calls every `onStop`, and closes the store if the application opened it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#sweep?.cancel();
    for (const controller of this.#running.values()) controller.abort(new AppClosedError());
    // Background moves stop with the passes they run; an answer they leave resolved waits for a sweep.
    await this.idle();
    try {
      await this.#internals.container.stop();
    } finally {
      if (this.#ownsStore) await this.#internals.store.close();
    }
  }

  /**
   * @internal Starts the sweep: every 30 s on the Clock it removes resolved pause records past their
   * retention and recovers trees nobody moves (resolved pauses left by a holder that died, or a pass
   * whose holder's lease lapsed).
   */
  startSweep(retentionMs: number): void {
    const { clock } = this.#internals;
    const tick = async () => {
      if (this.#closed) return;
      await this.sweepOnce(retentionMs);
      if (!this.#closed) this.#sweep = clock.setTimer(SWEEP_INTERVAL_MS, () => void tick());
    };
    this.#sweep = clock.setTimer(SWEEP_INTERVAL_MS, () => void tick());
  }

  /**
   * A holder id for one lease acquisition. Each call that moves a tree holds its lease under its own
   * id, so a second call in this process (the sweep, a resume, an execute on the same thread) waits
   * or steps aside like one from another instance, instead of being granted the lease it already holds.
   */
  #nextHolder(): string {
    this.#acquisitions += 1;
    return `${this.#holder}:${this.#acquisitions}`;
  }

  /**
   * Takes a tree's lease if it is free (or lapsed) and carries the tree on from its last checkpoint;
   * skips it when another holder has it. A failure is logged and leaves the tree for the next sweep.
   */
  async #recover(
    tenantId: string,
    threadId: string,
    rootExecutionId: string,
    pauseId: string | undefined,
  ): Promise<boolean> {
    const { clock, store, logger } = this.#internals;
    const lease = await store.leases.acquire({
      key: `${tenantId}/${threadId}`,
      holder: this.#nextHolder(),
      now: clock.now(),
      ttlMs: LEASE_TTL_MS,
    });
    if (lease === undefined) return false;
    let tree: Tree;
    try {
      tree = await this.#treeOf(tenantId, rootExecutionId);
      const status = tree.stored?.status;
      if (status !== undefined && ENDED.has(status)) {
        // Moved by another instance since the page was read, or an answer that came after its tree
        // ended (a cancel racing it): nothing to run. Such a pause leaves the sweep's list as taken.
        if (pauseId !== undefined) await store.pauses.take(tenantId, pauseId, { at: clock.now() }, lease);
        await store.leases.release(lease);
        return pauseId !== undefined;
      }
      await this.#markRunning(tree, lease);
    } catch (error) {
      await store.leases.release(lease).catch(() => undefined);
      logger.log({
        level: LogLevel.Warn,
        event: "sweep.recover-failed",
        message: `recovering execution ${rootExecutionId} failed: ${error instanceof Error ? error.message : String(error)}`,
        fields: { executionId: rootExecutionId, tenantId },
        at: clock.now(),
      });
      return false;
    }
    logger.log({
      level: LogLevel.Info,
      event: "sweep.recovering",
      message: `recovering execution ${rootExecutionId}`,
      fields: { executionId: rootExecutionId, tenantId },
      at: clock.now(),
    });
    await this.#pass(tree, lease, CONTINUE, false).catch(() => undefined);
    return true;
  }

  /**
   * Recovers trees page by page until a page is not full or moved none of its trees (all held by live
   * holders, or handled already). Each instance takes a page in its own random order, so instances
   * sweeping at once mostly take different trees, and a backlog is worked off in one sweep, not one
   * page every 30 seconds.
   */
  async #recoverPages(
    handled: Set<string>,
    nextPage: () => Promise<{
      full: boolean;
      trees: readonly { tenantId: string; threadId: string; rootExecutionId: string; pauseId?: string }[];
    }>,
  ): Promise<void> {
    for (;;) {
      const { full, trees } = await nextPage();
      let moved = 0;
      for (const tree of shuffled(trees)) {
        if (this.#closed) return;
        const root = `${tree.tenantId}/${tree.rootExecutionId}`;
        if (handled.has(root)) continue;
        handled.add(root);
        if (await this.#recover(tree.tenantId, tree.threadId, tree.rootExecutionId, tree.pauseId)) moved += 1;
      }
      if (!full || moved === 0) return;
    }
  }

  /** @internal One round of the sweep. */
  async sweepOnce(retentionMs: number): Promise<void> {
    const { clock, store, logger } = this.#internals;
    try {
      const removed = await store.pauses.deleteResolvedBefore(clock.now() - retentionMs);
      await store.budgets.deleteExpired(clock.now());
      if (removed > 0) {
        logger.log({
          level: LogLevel.Debug,
          event: "sweep.pauses-removed",
          message: `removed ${removed} resolved pauses`,
          fields: { removed },
          at: clock.now(),
        });
      }
      // Answered pauses nobody took (their resumer died between the two phases), oldest first, across
      // tenants: found by their own index, so long-waiting trees cannot crowd them out.
      const handled = new Set<string>();
      await this.#recoverPages(handled, async () => {
        const page = await store.pauses.listResolvedBefore({
          before: clock.now() - RECOVERY_GRACE_MS,
          limit: SWEEP_PAGE,
        });
        return { full: page.length === SWEEP_PAGE, trees: page };
      });
      // Trees recorded as running whose holder is gone (died, frozen or cut off past its lease): a start
      // that never rested, or a resume past its first phase (its pause may be Taken already). Paused trees
      // owe nothing unless a pause of theirs was answered, which the pages above find.
      await this.#recoverPages(handled, async () => {
        const page = await store.executions.listByStatus([ExecutionStatus.Running], SWEEP_PAGE);
        const settled = clock.now() - RECOVERY_GRACE_MS;
        return {
          full: page.length === SWEEP_PAGE,
          trees: page.filter((e) => e.executionId === e.rootExecutionId && e.updatedAt < settled),
        };
      });
    } catch (error) {
      logger.log({
        level: LogLevel.Error,
        event: "sweep.failed",
        message: String(error),
        fields: {},
        at: clock.now(),
      });
    }
  }

  /**
   * Moves a tree under its lease until it rests (paused with a pending pause, or ended). `CONTINUE`
   * goes on from the tree's last checkpoint: every answered pause (Resolved, or Taken by a holder that
   * died) is resumed, a step that was cut off mid-way runs again, and a tree with nothing left to do
   * ends at once. Before resting paused, pauses resolved meanwhile are taken too.
   *
   * Every record it writes is fenced by the lease, and it fires exactly one of `onExecutionFinish` /
   * `onExecutionError`, after the record that says so is stored. A holder that lost the lease, or a
   * store that cannot be reached, ends the pass with that error and leaves the tree to recovery.
   */
  async #pass(tree: Tree, lease: Lease, first: unknown, withRecord: boolean): Promise<ExecutionOutput> {
    const { store } = this.#internals;
    const graph = this.#graphs.get(tree.flow.start.cls) as CompiledFlow;
    const controller = new AbortController();
    const key = lease.key;
    this.#running.set(key, controller);
    const heartbeat = keepLeaseAlive(this.#internals, lease, (lost) => controller.abort(lost));
    let released = false;
    // The last record write and the lease's release are issued together so they can share a commit.
    const releaseLease = async () => {
      if (released) return;
      released = true;
      heartbeat.stop();
      await store.leases.release(lease);
    };
    const frame = { ...tree.frame, signal: controller.signal };
    const config = { configurable: { thread_id: key } };
    const tenantId = frame.tenant.tenantId;
    try {
      let command: unknown = first;
      let snapshot: Awaited<ReturnType<CompiledFlow["getState"]>> | undefined;
      let finished: FlowStateValue | undefined;
      let moved = false;
      const storedStatus = tree.stored?.status;
      if (command === CONTINUE && storedStatus !== undefined && ENDED.has(storedStatus)) {
        // Ended by a pass that ran while this one waited for the lease (an answer it took on the way
        // failed the tree, say): report how it ended; a Taken pause of it is not run again.
        snapshot = await graph.getState(config);
        const ended = await this.#endedElsewhere(
          tree,
          tenantId,
          snapshot.values as FlowStateValue,
          withRecord,
        );
        if (ended !== undefined) return ended;
      }
      for (;;) {
        if (command === CONTINUE) {
          snapshot = await graph.getState(config);
          if ((snapshot.values as Partial<FlowStateValue>).run?.executionId !== frame.executionId) {
            // Recorded as started, but its first checkpoint never landed: its process died at the start.
            throw new ExecutionInterruptedError(frame.executionId);
          }
          await this.#withdrawObsolete(tree, snapshot, lease);
          const map = await this.#resumeMap(tenantId, snapshot);
          if (Object.keys(map).length > 0) command = new Command({ resume: map });
          else if (owesWork(snapshot)) command = null;
          else break;
        }
        moved = true;
        const out = (await ExecutionContext.run(frame, () =>
          graph.invoke(command as never, {
            configurable: { thread_id: key, [FENCE_CONFIG_KEY]: { key: lease.key, epoch: lease.epoch } },
            signal: controller.signal,
            recursionLimit: 10_000,
          }),
        )) as FlowStateValue & { __interrupt__?: unknown };
        if (out.__interrupt__ === undefined) {
          finished = out;
          break;
        }
        // Before resting, take the pauses resolved while this pass ran (the drain).
        command = CONTINUE;
      }
      if (finished === undefined) {
        snapshot ??= await graph.getState(config);
        const waiting =
          snapshot.next.length === 0
            ? []
            : await store.pauses.list({
                tenantId,
                rootExecutionId: frame.rootExecutionId,
                statuses: [PauseStatus.Pending],
              });
        if (waiting.length > 0) {
          const pending = waiting.map((p) => pendingOf(this.#internals.assembled, p));
          const record = this.#record(
            tree,
            ExecutionStatus.Paused,
            snapshot.values as FlowStateValue,
            undefined,
            await this.#auditOf(tenantId, frame.rootExecutionId),
          );
          await Promise.all([this.#saveRecord(record, lease), releaseLease()]);
          await this.#emit("onExecutionPause", { ...this.#eventBase(frame), pending });
          return {
            status: ExecutionStatus.Paused,
            output: undefined,
            threadId: frame.threadId,
            executionId: frame.executionId,
            pending,
            children: record.children ?? [],
            ...(withRecord ? { record } : {}),
          };
        }
        finished = snapshot.values as FlowStateValue;
        if (!moved) {
          const ended = await this.#endedElsewhere(tree, tenantId, finished, withRecord);
          if (ended !== undefined) return ended;
        }
      }
      const state = finishOutput(tree.flow, finished);
      const record = this.#record(
        tree,
        ExecutionStatus.Completed,
        state,
        undefined,
        withRecord ? await this.#auditOf(tenantId, frame.rootExecutionId) : [],
      );
      await Promise.all([this.#saveRecord(record, lease), releaseLease()]);
      const output: ExecutionOutput = {
        status: ExecutionStatus.Completed,
        output: state.run.output,
        threadId: frame.threadId,
        executionId: frame.executionId,
        pending: [],
        children: record.children ?? [],
        ...(withRecord ? { record } : {}),
      };
      await this.#emit("onExecutionFinish", { ...this.#eventBase(frame), output });
      return output;
    } catch (error) {
      const stopped = controller.signal.aborted ? controller.signal.reason : undefined;
      // A holder that lost the lease leaves the tree to the new holder: it cleans nothing up.
      if (isLeaseLost(stopped)) throw stopped;
      if (isLeaseLost(error)) throw error;
      // An unreachable store, or an app closing mid-pass, is no failure of the work: the execution stays
      // as stored (running, or paused with an answer) and recovery carries it on.
      if (isInfrastructureFault(error) || stopped instanceof AppClosedError) {
        this.#leftForRecovery(frame, stopped ?? error);
        throw stopped ?? error;
      }
      const cancelled = stopped !== undefined;
      const thrown = cancelled && stopped instanceof Error ? stopped : error;
      await this.#fail(tree, lease, cancelled ? ExecutionStatus.Cancelled : ExecutionStatus.Failed, thrown);
      throw thrown;
    } finally {
      this.#running.delete(key);
      heartbeat.stop();
      await releaseLease().catch(() => undefined);
    }
  }

  /**
   * A pass that moved nothing and found the tree ended: a pass that waited for the lease behind the one
   * that ended it reports how it ended, and does not end it again. Undefined when the record does not
   * say it ended (its holder died after the last step): this pass records the end.
   */
  async #endedElsewhere(
    tree: Tree,
    tenantId: string,
    finished: FlowStateValue,
    withRecord: boolean,
  ): Promise<ExecutionOutput | undefined> {
    const { frame } = tree;
    const stored = await this.#internals.store.executions.findByTenantIdAndExecutionId(
      tenantId,
      frame.executionId,
    );
    const ended = stored?.record as ExecutionRecord | undefined;
    if (ended?.status === ExecutionStatus.Failed || ended?.status === ExecutionStatus.Cancelled) {
      throw new ExecutionEndedError(frame.executionId, ended.status, ended.error);
    }
    if (ended?.status !== ExecutionStatus.Completed) return undefined;
    const state = finishOutput(tree.flow, finished);
    return {
      status: ExecutionStatus.Completed,
      output: state.run.output,
      threadId: frame.threadId,
      executionId: frame.executionId,
      pending: [],
      ...(withRecord
        ? {
            record: {
              ...this.#record(tree, ExecutionStatus.Completed, state, undefined, []),
              pauses: await this.#auditOf(tenantId, frame.rootExecutionId),
            },
          }
        : {}),
    };
  }

  /**
   * Ends a tree that failed (or was cancelled): its pending pauses are cancelled, the record stored,
   * then `onExecutionError` fires. All under the lease: a holder that lost it throws `LeaseLostError`
   * and fires nothing; a record that could not be stored fires nothing either (recovery runs the tree
   * again and ends it), so an execution never gets both an error and a finish.
   */
  async #fail(tree: Tree, lease: Lease, status: ExecutionStatus, thrown: unknown): Promise<void> {
    const { frame } = tree;
    const tenantId = frame.tenant.tenantId;
    const graph = this.#graphs.get(tree.flow.start.cls) as CompiledFlow;
    const state = await graph.getState({ configurable: { thread_id: lease.key } }).catch(() => undefined);
    try {
      await closePending(
        this.#internals,
        tenantId,
        frame.rootExecutionId,
        PauseResolution.Cancelled,
        undefined,
        lease,
      );
      const audit = await this.#auditOf(tenantId, frame.rootExecutionId);
      await this.#saveRecord(
        this.#record(tree, status, state?.values as FlowStateValue | undefined, thrown, audit),
        lease,
      );
    } catch (recording) {
      if (isLeaseLost(recording)) throw recording;
      this.#leftForRecovery(frame, recording);
      return;
    }
    await this.#emit("onExecutionError", { ...this.#eventBase(frame), error: thrown });
  }

  /** Logs that a pass stopped on a fault that is not the work's, leaving the tree to recovery. */
  #leftForRecovery(frame: ExecutionFrame, error: unknown): void {
    const { logger, clock } = this.#internals;
    logger.log({
      level: LogLevel.Warn,
      event: "execution.left-for-recovery",
      message: `execution ${frame.rootExecutionId} stopped (${error instanceof Error ? error.message : String(error)}); the recovery sweep of any instance carries it on.`,
      fields: { tenantId: frame.tenant.tenantId, executionId: frame.executionId },
      at: clock.now(),
    });
  }

  /**
   * Withdraws the pending pauses of launches that no longer need their unfinished branches (a FailFast
   * failure, a passed deadline, a decided quorum) — the root's and those inside child executions, at any
   * depth — so their branches end and the joins run in this same call. Each withdrawn pause records the
   * outermost decided launch it waited under: a branch withdrawn by its own launch ends as withdrawn, one
   * withdrawn by a launch above it stops its whole child.
   */
  async #withdrawObsolete(tree: Tree, snapshot: FlowSnapshot, lease: Lease): Promise<void> {
    const state = snapshot.values as FlowStateValue | undefined;
    if (state?.run === undefined || state.run.executionId !== tree.frame.executionId) return;
    const { clock, assembled } = this.#internals;
    const flowOf = (start: AnyClass) => assembled.flows.get(start) as AssembledFlow;
    const decided = await decidedLaunches({
      flow: tree.flow,
      root: snapshot,
      now: clock.now(),
      flowOf,
      read: (start, checkpointNs) =>
        (this.#graphs.get(start) as CompiledFlow).getState({
          configurable: { thread_id: lease.key, checkpoint_ns: checkpointNs },
        }),
    });
    if (decided.length === 0) return;
    const by = (pause: PauseRecord) =>
      ((pause.step as PauseStep).branch?.launches ?? []).find((l) =>
        decided.some((d) => d.executionId === l.executionId && d.launchId === l.launchId),
      );
    await closePending(
      this.#internals,
      tree.frame.tenant.tenantId,
      tree.frame.rootExecutionId,
      PauseResolution.Withdrawn,
      (pause) => by(pause) !== undefined,
      lease,
      (pause) => {
        const launch = by(pause);
        return launch === undefined
          ? undefined
          : { withdrawnBy: { executionId: launch.executionId, launchId: launch.launchId } };
      },
    );
  }

  /** Interrupt ids of the snapshot whose pauses are answered (Resolved or Taken) or withdrawn, each mapped to its pause. */
  async #resumeMap(
    tenantId: string,
    snapshot: {
      tasks: readonly { interrupts?: readonly { id?: string; value?: unknown }[]; result?: unknown }[];
    },
  ) {
    const map: Record<string, { pauseId: string }> = {};
    for (const task of snapshot.tasks) {
      // A task that ended (a branch withdrawn by a launch inside its child, say) still lists the interrupt
      // it was resumed from until its whole superstep ends: resuming it again would change nothing.
      if (task.result !== undefined) continue;
      for (const pending of task.interrupts ?? []) {
        const pauseId = (pending.value as { pauseId?: unknown } | undefined)?.pauseId;
        if (typeof pauseId !== "string" || pending.id === undefined) continue;
        const pause = await this.#internals.store.pauses.findByTenantIdAndPauseId(tenantId, pauseId);
        const withdrawn =
          pause?.status === PauseStatus.Cancelled && pause.resolution === PauseResolution.Withdrawn;
        // A Taken pause whose task still waits was taken by a holder that died before its step ended:
        // the step runs again from its pause (and from the tool's kept result, when it had returned).
        const answered = pause?.status === PauseStatus.Resolved || pause?.status === PauseStatus.Taken;
        if (answered || withdrawn) map[pending.id] = { pauseId };
      }
    }
    return map;
  }

  /** Takes the tree's lease, waiting while another holder has it (until it returns, or its lease lapses). */
  async #acquireWaiting(key: string): Promise<Lease> {
    const { store, clock } = this.#internals;
    for (;;) {
      this.#assertOpen();
      const lease = await store.leases.acquire({
        key,
        holder: this.#nextHolder(),
        now: clock.now(),
        ttlMs: LEASE_TTL_MS,
      });
      if (lease !== undefined) return lease;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Rebuilds what a pass needs from the stored root execution. */
  async #treeOf(tenantId: string, rootExecutionId: string): Promise<Tree> {
    const stored = await this.#internals.store.executions.findByTenantIdAndExecutionId(
      tenantId,
      rootExecutionId,
    );
    if (stored === undefined) throw new UnknownPauseError(rootExecutionId);
    const record = stored.record as ExecutionRecord;
    const flow = [...this.#internals.assembled.flows.values()].find((f) => f.start.name === record.start);
    if (flow === undefined) throw new UnknownWorkflowStartError(record.start, []);
    return {
      flow,
      stored,
      startedAt: Date.parse(record.startedAt),
      input: record.input,
      budget: record.budget,
      frame: {
        tenant: record.tenant,
        ownerId: record.ownerId,
        threadId: record.threadId,
        executionId: record.executionId,
        rootExecutionId: record.rootExecutionId,
        workflow: record.workflow,
        env: this.#env,
        step: undefined,
        signal: new AbortController().signal,
      },
    };
  }

  async #auditOf(tenantId: string, rootExecutionId: string): Promise<PauseEntry[]> {
    const answers = await this.#internals.store.executions.findPauseAnswersByTenantIdAndRootExecutionId(
      tenantId,
      rootExecutionId,
    );
    return answers.map((a) => a.answer as PauseEntry);
  }

  #record(
    tree: Tree,
    status: ExecutionStatus,
    state: FlowStateValue | undefined,
    error: unknown,
    pauses: readonly PauseEntry[],
  ): ExecutionRecord {
    const { frame, flow } = tree;
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
      tenant: frame.tenant,
      executionId: frame.executionId,
      rootExecutionId: frame.rootExecutionId,
      threadId: frame.threadId,
      ownerId: frame.ownerId,
      workflow: frame.workflow,
      start: flow.start.name,
      status,
      startedAt: new Date(tree.startedAt).toISOString(),
      finishedAt: done ? new Date(this.#internals.clock.now()).toISOString() : undefined,
      input: maskWith(flow.start.input.schema, tree.input),
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
      ...(tree.budget === undefined ? {} : { budget: tree.budget }),
      pauses,
      children: childRecords(Object.values(ownRun?.children ?? {}), pauses),
    };
  }

  async #saveRecord(record: ExecutionRecord, fence?: Fence): Promise<void> {
    await this.#internals.store.executions.save(
      {
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
      },
      fence,
    );
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

  async #emit<K extends keyof ExecutionEvents>(
    name: K,
    event: Parameters<NonNullable<ExecutionEvents[K]>>[0],
  ): Promise<void> {
    const handler = this.#events[name] as ((e: typeof event) => unknown) | undefined;
    if (handler === undefined) return;
    try {
      await handler.call(this.#events, event);
    } catch (error) {
      const { logger, clock } = this.#internals;
      logger.log({
        level: LogLevel.Error,
        event: "app.event-handler-failed",
        message: `${name} threw: ${String(error)}`,
        fields: { handler: name },
        at: clock.now(),
      });
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

/** The items in a random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** The statuses an execution ends in. */
const ENDED: ReadonlySet<string> = new Set([
  ExecutionStatus.Completed,
  ExecutionStatus.Failed,
  ExecutionStatus.Cancelled,
]);

/** Whether an error is (or was caused by) a lost lease. */
function isLeaseLost(error: unknown): error is LeaseLostError {
  return error instanceof LeaseLostError || hasCause(error, LeaseLostError);
}

/** Whether an error is an infrastructure fault (the store unreachable), not a failure of the work. */
function isInfrastructureFault(error: unknown): boolean {
  return error instanceof StoreUnavailableError || hasCause(error, StoreUnavailableError);
}

/**
 * Whether a tree whose last checkpoint has no answered pause to resume still owes work: a task of the
 * next superstep that neither ended nor waits on an interrupt (its holder died while it ran).
 */
function owesWork(snapshot: {
  next: readonly string[];
  tasks: readonly { interrupts?: readonly unknown[]; result?: unknown }[];
}): boolean {
  if (snapshot.next.length === 0) return false;
  return snapshot.tasks.some((task) => task.result === undefined && (task.interrupts ?? []).length === 0);
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
  const container = new Container([
    { provide: CLOCK, useValue: clock },
    { provide: LOGGER, useValue: logger },
    ...(appOptions?.providers ?? []),
    ...(options.providers ?? []),
  ]);
  const assembled = assemble(application, container, { modelsScripted: options.modelsScripted === true });
  const configured = options.store ?? assembled.options.store ?? (await defaultStoreFactory());
  const ownsStore = typeof configured === "function";
  const store =
    typeof configured === "function"
      ? await configured({ appName: assembled.name, clock, logger })
      : configured;
  const models = new ModelRegistry(container, assembled.modelProviders);
  try {
    await container.start();
  } catch (error) {
    if (ownsStore) await store.close();
    throw error;
  }
  const events = container.get(application) as ExecutionEvents;
  const env = options.env ?? process.env.AGBOSS_ENV ?? "dev";
  const app = new App({
    internals: { container, models, clock, logger, store, assembled, env },
    ownsStore,
    env,
    events,
  });
  app.startSweep(toMilliseconds(assembled.options.pauseRecordRetention ?? hours(24)));
  return app;
}
