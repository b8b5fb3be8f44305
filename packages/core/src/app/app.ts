import { randomUUID } from "node:crypto";
import type {
  AnswerOptions,
  AnswerReceipt,
  ResumeOptions,
  ResumeRequest,
} from "../answering/answer-request.js";
import { listPauses, type PauseInboxQuery, type PauseSummary } from "../answering/inbox.js";
import { closePending } from "../answering/pause-book.js";
import { recordAnswer } from "../answering/record-answer.js";
import type { AssembledFlow } from "../assembly/assembled-application.js";
import { type BudgetLimits, checkBudgetLimits } from "../budgets/budget.js";
import type { WorkflowInput, WorkflowOutput } from "../components/workflow-start-of.js";
import { type AnyClass, describeClass } from "../container/component-registry.js";
import type { Container } from "../container/container.js";
import type { ExecutionFrame, Tenant } from "../container/execution-context.js";
import { parseDto } from "../dto/dto.js";
import { maskWith } from "../dto/sensitive.js";
import { UnknownWorkflowStartError } from "../errors/app-errors.js";
import { DtoValidationError } from "../errors/dto-validation-error.js";
import {
  AppClosedError,
  ExecutionCancelledError,
  ExecutionIdTakenError,
  ThreadBusyError,
} from "../errors/runtime-errors.js";
import { withAuditTrail } from "../execution/child-records.js";
import { ExecutionEventEmitter } from "../execution/event-emitter.js";
import { ExecutionAbortedError } from "../execution/execution-errors.js";
import type { ExecutionEvents } from "../execution/execution-events.js";
import {
  type ExecutionFollow,
  type FollowOptions,
  type FollowTarget,
  followExecution,
} from "../execution/execution-follow.js";
import type { ExecutionOutput } from "../execution/execution-output.js";
import { ExecutionRecorder } from "../execution/execution-recorder.js";
import { type ExecutionBeginEvent, ExecutionStream } from "../execution/execution-stream.js";
import { TreeMover } from "../execution/pass.js";
import { Recovery } from "../execution/recovery.js";
import { tenantOf, threadOpenFor } from "../execution/start.js";
import { CONTINUE, ENDED, readTree, type Tree } from "../execution/tree.js";
import { TreeLeases } from "../execution/tree-leases.js";
import { takeForPass } from "../execution/what-to-resume.js";
import { type CompiledFlow, compileFlow, startOf } from "../graph/compile-flow.js";
import { LogLevel } from "../logging/logger.js";
import type { ModelRegistry } from "../models/model-registry.js";
import type { PauseRecord } from "../pauses/pause-record.js";
import { PauseAnswerer, PauseResolution } from "../pauses/pause-status.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import { ExecutionStatus } from "../records/execution-status.js";
import { rememberExecutionBudget } from "../services/budget-guard.js";
import { tellFollowersFailed } from "../services/followers.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { pauseAttributes } from "../services/tracing.js";
import { LEASE_TTL_MS } from "../services/tree-lease.js";
import { forgetReadAhead, type ReadAhead, readAheadOf } from "../store/checkpoint-history.js";
import { LeaseLostError } from "../store/fence.js";
import { type Lease, RELEASED_LEASE_EXPIRY } from "../store/lease-repository.js";
import type { Store } from "../store/store.js";

/** Options of `app.execute`. */
export interface ExecuteOptions {
  /** The conversation; a follow-up on the same id continues it. Default: a new random id. */
  readonly threadId?: string;
  /** Who starts it; the thread's owner. */
  readonly ownerId: string;
  /** The tenant, with any fields of your own. Default `{ tenantId: "default" }`. */
  readonly tenant?: Tenant;
  /** The tenant's id alone: the same as `tenant: { tenantId }`. When both are given they must agree. */
  readonly tenantId?: string;
  /** Return the execution record as `result.record`. */
  readonly record?: boolean;
  /** Limits on the model spend of this execution tree; replaces the workflow's `executionBudget`. */
  readonly budget?: BudgetLimits;
  /**
   * The execution's id; default a new random one. Give one derived from a request's idempotency key
   * to start at most one execution per key: a start whose id the tenant already has is refused with
   * `ExecutionIdTakenError` and runs nothing (checked under the thread's lease, so derive the id from
   * the thread too). At most 256 characters.
   */
  readonly executionId?: string;
  /**
   * Stops this call's work at its next step and detaches the caller: the call rejects with
   * `ExecutionAbortedError`, and the execution is not ended. It stays recorded as running (durable: a
   * client that went away loses no work) and the thread's lease is released, so the recovery sweep of
   * any instance carries it on from its last checkpoint at its next round; `app.cancel(threadId)` is how
   * to stop it for good. Stopped before its first step was stored, it is recorded as cancelled; aborted
   * before the call, nothing is stored.
   */
  readonly signal?: AbortSignal;
}

/** The longest `executionId` a start may choose. */
const MAX_EXECUTION_ID_CHARS = 256;

function checkExecutionId(executionId: unknown): string {
  if (typeof executionId !== "string" || executionId === "" || executionId.length > MAX_EXECUTION_ID_CHARS) {
    throw new DtoValidationError("ExecuteOptions", [
      {
        path: "executionId",
        message: `an executionId is a text of 1 to ${MAX_EXECUTION_ID_CHARS} characters`,
      },
    ]);
  }
  return executionId;
}

/** @internal What the testing kit reaches into. */
export interface AppInternals extends RuntimeServices {
  readonly container: Container;
  readonly models: ModelRegistry;
}

const INTERNALS = Symbol.for("agboss.app.internals");

/** @internal The internals of an app, for the testing kit. */
export function appInternals(app: App): AppInternals {
  return (app as unknown as Record<symbol, AppInternals>)[INTERNALS] as AppInternals;
}

/**
 * A running application: the facade over the runtime. Create one per process with `createApp`, and
 * `close()` it on shutdown. What it does is in the modules it calls: answering/ records answers,
 * execution/ moves trees under their leases and recovers them, graph/ is what a move runs.
 */
export class App {
  readonly #services: AppInternals;
  readonly #mover: TreeMover;
  readonly #leases: TreeLeases;
  readonly #recorder: ExecutionRecorder;
  readonly #events: ExecutionEventEmitter;
  readonly #recovery: Recovery;
  readonly #background = new Set<Promise<void>>();
  readonly #ownsStore: boolean;
  #closed = false;

  /** @internal Use `createApp`. */
  constructor(args: { internals: AppInternals; ownsStore: boolean; events: ExecutionEvents }) {
    const services = args.internals;
    this.#services = services;
    this.#ownsStore = args.ownsStore;
    Object.defineProperty(this, INTERNALS, { value: services, enumerable: false });
    const graphs = new Map<AnyClass, CompiledFlow>();
    const flowOf = (start: AnyClass) => services.assembled.flows.get(start) as AssembledFlow;
    for (const [startClass, flow] of services.assembled.flows) {
      graphs.set(startClass, compileFlow(flow, services, services.store.checkpointer, flowOf));
    }
    this.#recorder = new ExecutionRecorder(services);
    this.#events = new ExecutionEventEmitter(services, args.events);
    this.#leases = new TreeLeases(services, () => this.#assertOpen());
    this.#mover = new TreeMover({ services, graphs, recorder: this.#recorder, events: this.#events });
    this.#recovery = new Recovery({
      services,
      mover: this.#mover,
      leases: this.#leases,
      recorder: this.#recorder,
      isClosed: () => this.#closed,
    });
  }

  /** The application's name. */
  get name(): string {
    return this.#services.assembled.name;
  }

  /** The store the application runs on. */
  get store(): Store {
    return this.#services.store;
  }

  /** The container's instance for a token, e.g. a service you registered. */
  get<T>(token: AnyClass<T>): T {
    return this.#services.container.get(token);
  }

  /**
   * Starts a workflow at `start` with `input` (validated against the start's DTO before anything is
   * stored) and runs it until it finishes or rests paused. `input` and `result.output` are typed by
   * the start's declared DTOs (`extends WorkflowStartOf<Input, Output>`, or `agboss types`); without
   * them, `input` is any record and `output` is `unknown`.
   */
  execute<TStart extends AnyClass>(
    start: TStart,
    input: WorkflowInput<TStart>,
    options: ExecuteOptions,
  ): Promise<ExecutionOutput<WorkflowOutput<TStart>>> {
    return this.#execute(start, input, options, undefined);
  }

  /**
   * Starts a workflow like {@link execute} and streams what it does as it happens: the model turns,
   * the tool calls, the pauses asked and answered, the budgets charged, and last how it came to rest.
   * `result` is what `execute` would have returned. The run never waits for the reader.
   *
   * @example
   * const run = app.stream(RefundWorkflowStart, { text: "Refund ord_1" }, { ownerId: "customer-7" });
   * for await (const event of run) if (event.type === "tool.started") console.log(`running ${event.tool}…`);
   * const { output } = await run.result;
   */
  stream<TStart extends AnyClass>(
    start: TStart,
    input: WorkflowInput<TStart>,
    options: ExecuteOptions,
  ): ExecutionStream<WorkflowOutput<TStart>> {
    return new ExecutionStream((listen) => this.#execute(start, input, options, listen), this.#now);
  }

  readonly #now = (): string => new Date(this.#services.clock.now()).toISOString();

  async #execute<TStart extends AnyClass>(
    start: TStart,
    input: WorkflowInput<TStart>,
    options: ExecuteOptions,
    progress: ExecutionFrame["progress"],
  ): Promise<ExecutionOutput<WorkflowOutput<TStart>>> {
    this.#assertOpen();
    signalOf("app.execute", "ExecuteOptions", options);
    const flow = this.#flowOf(start);
    const value = parseDto(flow.start.input, input, `the input of ${flow.start.name}`);
    const budget = options.budget === undefined ? undefined : checkBudgetLimits("budget", options.budget);
    const chosenId = options.executionId === undefined ? undefined : checkExecutionId(options.executionId);
    const tenant = tenantOf(options);
    const threadId = options.threadId ?? randomUUID();
    const { store, clock } = this.#services;
    // The lease, the checks under it and the first records are one unit: one commit, and on a database
    // nothing to undo when a check refuses the start (the in-memory store keeps the lease: let go below).
    let acquired: Lease | undefined;
    const { lease, tree, newThread, finished } = await store
      .atomically(async () => {
        const lease = await this.#leases.tryAcquire(`${tenant.tenantId}/${threadId}`);
        acquired = lease;
        if (lease === undefined)
          throw new ThreadBusyError(threadId, "another call is moving it right now; retry when it returns.");
        // Checked under the lease: a start that raced this one may have paused on the thread meanwhile.
        const thread = await threadOpenFor(this.#services, {
          tenantId: tenant.tenantId,
          threadId,
          ownerId: options.ownerId,
          workflowName: flow.workflow.name,
        });
        if (
          chosenId !== undefined &&
          (await store.executions.findByTenantIdAndExecutionId(tenant.tenantId, chosenId)) !== undefined
        ) {
          throw new ExecutionIdTakenError(chosenId);
        }
        const executionId = chosenId ?? randomUUID();
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
            env: this.#services.env,
            step: undefined,
            signal: new AbortController().signal,
          },
        };
        await store.threads.save({
          tenantId: tenant.tenantId,
          threadId,
          ownerId: options.ownerId,
          workflowName: flow.workflow.name,
          latestExecutionId: executionId,
          createdAt: thread.record?.createdAt ?? startedAt,
          updatedAt: startedAt,
        });
        await this.#recorder.save(
          this.#recorder.build(tree, { status: ExecutionStatus.Running, pauses: [] }),
        );
        return { lease, tree, newThread: thread.record === undefined, finished: thread.finished };
      })
      .catch(async (error: unknown) => {
        // Only this grant, if it is on record: on a database the unit rolled it back, and another
        // holder may hold the same epoch by now, whose lease a release by epoch would end.
        if (acquired !== undefined) await this.#leases.releaseIfHeld(acquired).catch(() => undefined);
        throw error;
      });
    const { executionId } = tree.frame;
    rememberExecutionBudget(this.#services, tenant.tenantId, executionId, budget);
    await this.#events.emit("onExecutionStart", {
      ...this.#events.base(tree.frame),
      input: maskWith(flow.start.input.schema, value),
    });
    progress?.(
      begun({
        type: "execution.started",
        executionId,
        rootExecutionId: executionId,
        threadId,
        at: this.#now(),
        workflow: flow.workflow.name,
      }),
    );
    // The finish validated the output against the DTO that WorkflowOutput names.
    return this.#mover.move({
      tree,
      lease,
      first: startOf(flow, { run: { reset: { executionId, input: value } }, visit: { set: null } }, finished),
      newThread,
      withRecord: options.record === true,
      signal: options.signal,
      progress,
    }) as Promise<ExecutionOutput<WorkflowOutput<TStart>>>;
  }

  /**
   * Answers a pause by its id, from any instance sharing the store: with a decision, or with a
   * person's free text for the role's reply interpreter. Phase 1 records the answer atomically
   * (Pending → Resolved); phase 2 moves the tree under its lease, taking every answered pause.
   *
   * @example
   * await app.resume({ pauseId, decision: { approved: true } }, { tenantId: "acme", answeredBy: "manager-17" });
   */
  resume<TRole = unknown>(request: ResumeRequest<TRole>, options: ResumeOptions): Promise<ExecutionOutput> {
    return this.#resume(request, options, undefined);
  }

  /**
   * Answers a pause like {@link resume} and streams what the tree does from there, as {@link stream}
   * does for a start; `result` is what `resume` would have returned. For a webhook that must reply fast,
   * use {@link answer} instead.
   */
  streamResume<TRole = unknown>(request: ResumeRequest<TRole>, options: ResumeOptions): ExecutionStream {
    return new ExecutionStream((listen) => this.#resume(request, options, listen), this.#now);
  }

  async #resume<TRole = unknown>(
    request: ResumeRequest<TRole>,
    options: ResumeOptions,
    progress: ExecutionFrame["progress"],
  ): Promise<ExecutionOutput> {
    this.#assertOpen();
    // Read as the caller passed it: a missing credential is phase 1's DtoValidationError.
    const signal = signalOf("app.resume", "ResumeOptions", options);
    // Phase 2 starts in phase 1's commit when the tree's lease is free: taken and the tree marked running.
    const readsAhead: ReadAhead[] = [];
    let taken: ReadAhead | undefined;
    let recorded: Awaited<ReturnType<typeof recordAnswer<Claimed | undefined>>>;
    try {
      recorded = await this.#answerTraced(() =>
        recordAnswer(this.#services, request, options, (r) => this.#claim(r, readsAhead)),
      );
      taken =
        recorded.claimed !== undefined && "tree" in recorded.claimed ? recorded.claimed.readAhead : undefined;
    } finally {
      // Reads begun by attempts of the unit that ran again or did not commit, or for a tree that could not
      // be read: nobody will take them.
      for (const ahead of readsAhead) {
        if (ahead !== taken) forgetReadAhead(this.#services.store.checkpointer, ahead);
      }
    }
    const { resolved, responder, claimed } = recorded;
    const withRecord = options.record === true;
    const held =
      claimed ??
      (await this.#underLease(
        resolved,
        await this.#leases.acquireWaiting(`${resolved.tenantId}/${resolved.threadId}`, () =>
          abortedWaiting(resolved, signal),
        ),
      ));
    return this.#moveAnswered({ held, resolved, responder, withRecord, signal, progress });
  }

  /**
   * Inside phase 1's unit of work: takes the answered tree's lease when it is free, reads the tree under
   * it, marks it running and takes the answered pause for its step (see `takeForPass`), so the answer
   * and the start of phase 2 share one commit. Undefined when the
   * lease is held (phase 2 then waits for it); a tree that cannot be read is handed on as `failed`, its
   * lease still taken (the caller lets go of it), so the answer is kept. (A statement of the unit that
   * fails on Postgres aborts its transaction: then nothing of it is kept, the answer included, and the
   * caller gets the error with the pause still pending.)
   */
  async #claim(resolved: PauseRecord, readsAhead: ReadAhead[]): Promise<Claimed | undefined> {
    const lease = await this.#leases.tryAcquire(`${resolved.tenantId}/${resolved.threadId}`);
    if (lease === undefined) return undefined;
    // The checkpoint the pass reads first, read now beside the tree's read where the store has a pool:
    // the lease just taken holds off every other writer of it. Noted in `readsAhead` for the caller,
    // which lets go of the reads that no pass will take.
    const readAhead = readAheadOf(this.#services.store.checkpointer, lease.key);
    if (readAhead !== undefined) readsAhead.push(readAhead);
    const held = await this.#underLease(resolved, lease);
    if ("failed" in held) return held;
    const taken = await takeForPass(this.#services, resolved, held);
    return { ...held, taken, ...(readAhead === undefined ? {} : { readAhead }) };
  }

  /**
   * Reads the answered tree under its lease (a holder that ran while this call waited may have ended
   * it) and marks it running: the durable trace of phase 2. From there, a tree whose holder dies is
   * found by the sweep as running once its lease lapses, whatever its pauses' states.
   */
  async #underLease(resolved: PauseRecord, lease: Lease): Promise<Claimed> {
    try {
      const tree = await readTree(this.#services, resolved.tenantId, resolved.rootExecutionId);
      await this.#recorder.markRunning(tree, lease);
      return { lease, tree };
    } catch (error) {
      return { lease, failed: error };
    }
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
  async answer<TRole = unknown>(
    request: ResumeRequest<TRole>,
    options: AnswerOptions,
  ): Promise<AnswerReceipt> {
    this.#assertOpen();
    const signal = signalOf("app.answer", "AnswerOptions", options);
    const { resolved, responder } = await this.#answerTraced(() =>
      recordAnswer(this.#services, request, options),
    );
    const { tenantId } = resolved;
    const moving = (async () => {
      const lease = await this.#leases.acquireWaiting(`${tenantId}/${resolved.threadId}`, () =>
        abortedWaiting(resolved, signal),
      );
      await this.#moveAnswered({
        held: await this.#underLease(resolved, lease),
        resolved,
        responder,
        withRecord: false,
        signal,
      });
    })().catch((error: unknown) => {
      // Not a failure: a closing app or the caller's signal leaves the answered tree to the sweep.
      if (error instanceof AppClosedError || error instanceof ExecutionAbortedError) return;
      const { logger, clock } = this.#services;
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
      resolvedAt: new Date(resolved.resolvedAt ?? this.#services.clock.now()).toISOString(),
    };
  }

  /** Phase 1 in a span of its own (`agboss.pause.answer`), when the application traces. */
  async #answerTraced<T extends { readonly resolved: PauseRecord }>(record: () => Promise<T>): Promise<T> {
    const span = this.#services.tracing?.start("agboss.pause.answer", () => ({}));
    if (span === undefined) return record();
    try {
      const recorded = await span.run(record);
      span.set(pauseAttributes(recorded.resolved));
      span.end();
      return recorded;
    } catch (error) {
      span.end(error);
      throw error;
    }
  }

  /** Resolves when the trees this process moves in the background after {@link answer} have all moved. */
  async idle(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }

  /** Phase 2 under the tree's lease: fires the resume event and moves the tree, taking every answered pause. */
  async #moveAnswered(args: {
    /** The tree's lease, and the tree read under it and marked running (or why it could not be). */
    readonly held: Claimed;
    readonly resolved: PauseRecord;
    readonly responder: string;
    readonly withRecord: boolean;
    readonly signal: AbortSignal | undefined;
    readonly progress?: ExecutionFrame["progress"];
  }): Promise<ExecutionOutput> {
    const { held, resolved, responder, withRecord, signal, progress } = args;
    const { lease } = held;
    if ("failed" in held) {
      // The unit that took the lease may have ended without it: let go only of a grant on record.
      await this.#leases.releaseIfHeld(lease).catch(() => undefined);
      throw held.failed;
    }
    const { tree } = held;
    const pauseId = resolved.answeredBy === PauseAnswerer.ThreadOwner ? resolved.pauseId : undefined;
    await this.#events.emit("onExecutionResume", {
      ...this.#events.base(tree.frame),
      pauseId,
      answeredBy: responder,
    });
    const { frame } = tree;
    progress?.(
      begun({
        type: "execution.resumed",
        executionId: frame.executionId,
        rootExecutionId: frame.rootExecutionId,
        threadId: frame.threadId,
        at: this.#now(),
        workflow: frame.workflow.name,
        pauseId,
        answeredBy: responder,
      }),
    );
    return this.#mover.move({
      tree,
      lease,
      first: CONTINUE,
      withRecord,
      signal,
      progress,
      // The step waiting on it goes on from it as stored by phase 1 (taken there, when it could be),
      // without reading it again.
      answered: ("taken" in held ? held.taken : undefined) ?? resolved,
      readAhead: held.readAhead,
    });
  }

  /**
   * Follows an execution that another call runs, in this process or on another instance sharing the
   * store: `{ threadId }` follows the thread's latest execution, `{ executionId }` the tree it belongs to.
   * A pass of this process is heard as it happens (everything `stream` shows); one elsewhere through the
   * store, every `pollIntervalMs` on the Clock (its pauses and how it came to rest). Each event comes
   * once; the follow ends after `execution.finished` or `execution.failed` (at once for an execution that
   * had ended), going on through `execution.paused`. Stopping it (`signal`, or leaving the loop) stops
   * following, not the run.
   *
   * @example
   * for await (const event of app.follow({ threadId }, { tenantId: "acme" })) console.log(event.type);
   */
  follow(target: FollowTarget, options: FollowOptions = {}): ExecutionFollow {
    this.#assertOpen();
    return followExecution(this.#services, target, options, this.#following.signal);
  }

  /** Aborted by `close()`: every follow of this application ends. */
  readonly #following = new AbortController();

  /** The application's pauses, for an inbox or an admin panel. A Channel pause's id is never shown. */
  readonly pauses = {
    list: async (query: PauseInboxQuery): Promise<PauseSummary[]> => {
      const { store, assembled } = this.#services;
      return listPauses(store, assembled, query);
    },
  };

  /**
   * Cancels the conversation on `threadId`: its pending pauses are withdrawn (resolution Cancelled,
   * each channel told once), a pass running in this process is aborted, a pass on another instance loses
   * the tree's lease (taken over at once, so it cannot record the execution over the cancellation), and
   * the execution is recorded as cancelled. Cancelling a finished thread does nothing.
   */
  async cancel(threadId: string, options: { tenantId?: string } = {}): Promise<void> {
    this.#assertOpen();
    const tenantId = options.tenantId ?? "default";
    const { store } = this.#services;
    if ((await store.threads.findByTenantIdAndThreadId(tenantId, threadId)) === undefined) return;
    const local = this.#mover.running.get(`${tenantId}/${threadId}`);
    // A pass already aborted (its caller's signal, a lost lease) would not take this cancel as its reason:
    // it is cancelled under the lease, as on another instance.
    if (local !== undefined && !local.signal.aborted) {
      // A pass of this process moves the tree: it stops at its next step and records the cancellation
      // itself (under its lease). Its channel may be in the middle of a send that this call must not
      // wait for; the pending pauses are closed now, so the send's step tells its channel once it returns.
      local.abort(new ExecutionCancelledError(threadId));
      await this.#cancelRecorded(tenantId, threadId, undefined);
      return;
    }
    // Otherwise under the tree's lease, so what this call records is fenced. When another instance holds
    // it, the lease is taken over at once (a send or a tool in flight must not hold a cancel up): that
    // holder's next fenced write fails and its heartbeat stops its pass, so it cannot end the tree over
    // the cancellation.
    const key = `${tenantId}/${threadId}`;
    const readAt = this.#services.clock.now();
    const before = await store.leases.find(key);
    const free = await this.#leases.tryAcquire(key);
    const lease = free ?? (await this.#leases.takeOver(key));
    // Lapsed, not let go, just before this grant: its holder stopped without releasing it (killed, or
    // stalled past it), and may have asked questions it never marked sent. A holder that let it go (its
    // pass ended, or was aborted) is not taken for gone: a send it left running tells its channel itself.
    // Lapsed when read, too: a release that landed between the read and the grant keeps the epoch.
    const lapsed =
      free !== undefined &&
      before !== undefined &&
      before.expiresAt !== RELEASED_LEASE_EXPIRY &&
      before.expiresAt <= readAt &&
      free.epoch === before.epoch + 1;
    try {
      await this.#cancelRecorded(tenantId, threadId, lease, lapsed);
    } catch (error) {
      // Only another cancel takes a live lease over: that one records the cancellation.
      if (!(error instanceof LeaseLostError)) throw error;
    } finally {
      if (lease !== undefined) await store.leases.release(lease).catch(() => undefined);
    }
  }

  /** Closes the latest execution's pending pauses as cancelled and records it cancelled, unless it ended. */
  async #cancelRecorded(
    tenantId: string,
    threadId: string,
    lease: Lease | undefined,
    leaseLapsed = false,
  ): Promise<void> {
    const { store, clock } = this.#services;
    const thread = await store.threads.findByTenantIdAndThreadId(tenantId, threadId);
    const latest =
      thread === undefined
        ? undefined
        : await store.executions.findByTenantIdAndExecutionId(tenantId, thread.latestExecutionId);
    if (latest === undefined || ENDED.has(latest.status)) return;
    await closePending(this.#services, {
      tenantId,
      rootExecutionId: latest.rootExecutionId,
      resolution: PauseResolution.Cancelled,
      fence: lease,
      // Its holder gone, a question it left unsent was asked, if at all, by a process that died (or
      // stalled) before it could mark it, and nobody else may take it back. (A step whose send threw
      // leaves no pause pending: its pass or its branch closes it as it fails.)
      tellUnsent: leaseLapsed ? () => true : undefined,
      // Its holder alive as far as anyone knows (here, or on another instance whose lease this call took
      // over), a question it left unsent is its step's to take back once its send returns; should that
      // holder never come back, the recovery sweep takes it back when its lease would have run out.
      withdrawalOwedAt: clock.now() + LEASE_TTL_MS,
    });
    const record = latest.record as ExecutionRecord;
    await store.executions.save(
      {
        ...latest,
        status: ExecutionStatus.Cancelled,
        updatedAt: clock.now(),
        record: {
          ...record,
          status: ExecutionStatus.Cancelled,
          finishedAt: new Date(clock.now()).toISOString(),
        },
      },
      lease,
    );
    tellFollowersFailed(this.#services, latest, new ExecutionCancelledError(threadId));
  }

  /** The stored record of an execution, with its audit trail. */
  async record(
    executionId: string,
    options: { tenantId?: string } = {},
  ): Promise<ExecutionRecord | undefined> {
    const tenantId = options.tenantId ?? "default";
    const stored = await this.#services.store.executions.findByTenantIdAndExecutionId(tenantId, executionId);
    if (stored === undefined) return undefined;
    const record = stored.record as ExecutionRecord;
    const pauses = await this.#recorder.audit(tenantId, stored.rootExecutionId);
    return withAuditTrail(record, pauses);
  }

  /** Stops the sweep, calls every `onStop`, and closes the store if the application opened it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#recovery.stop();
    this.#following.abort();
    for (const controller of this.#mover.running.values()) controller.abort(new AppClosedError());
    // Background moves stop with the passes they run; an answer they leave resolved waits for a sweep.
    await this.idle();
    // So does a sweep round in flight: it starts no tree once the app is closed, and the store stays
    // open until it has stopped.
    await this.#recovery.idle();
    try {
      await this.#services.container.stop();
    } finally {
      if (this.#ownsStore) await this.#services.store.close();
    }
  }

  /**
   * @internal Starts the sweep: every 30 s on the Clock it removes resolved pause records past their
   * retention and recovers trees nobody moves.
   */
  startSweep(retentionMs: number): void {
    this.#recovery.start(retentionMs);
  }

  /** @internal One round of the sweep. */
  sweepOnce(retentionMs: number): Promise<void> {
    return this.#recovery.sweepOnce(retentionMs);
  }

  #flowOf(start: AnyClass): AssembledFlow {
    const flow = this.#services.assembled.flows.get(start);
    if (flow !== undefined) return flow;
    const known = [...this.#services.assembled.flows.values()].map((f) => f.start.cls.name);
    throw new UnknownWorkflowStartError(describeClass(start), known);
  }

  #assertOpen(): void {
    if (this.#closed) throw new AppClosedError();
  }
}

/** A stream's first event, checked against its type. */
function begun(event: ExecutionBeginEvent): ExecutionBeginEvent {
  return event;
}

/**
 * The `signal` of a call's options: checked to be an `AbortSignal`, and refused when it is aborted
 * already, before the call records anything.
 */
function signalOf(call: string, optionsName: string, options: unknown): AbortSignal | undefined {
  const signal = (options as { signal?: unknown } | null | undefined)?.signal;
  if (signal === undefined) return undefined;
  if (!(signal instanceof AbortSignal)) {
    throw new DtoValidationError(optionsName, [{ path: "signal", message: "a signal is an AbortSignal" }]);
  }
  if (signal.aborted) throw new ExecutionAbortedError({ call, reason: signal.reason });
  return signal;
}

/** Gives up waiting for an answered tree's lease once the caller's signal aborted: the sweep takes the answer. */
function abortedWaiting(resolved: PauseRecord, signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new ExecutionAbortedError({
      executionId: resolved.rootExecutionId,
      threadId: resolved.threadId,
      reason: signal.reason,
    });
  }
}

/** What phase 1 claimed of phase 2: the tree's lease, and the tree read and marked running (or why not). */
type Claimed =
  | {
      readonly lease: Lease;
      readonly tree: Tree;
      /** The tree's checkpoint, read ahead in phase 1 (see `ReadsAhead`), for the pass's first read. */
      readonly readAhead?: ReadAhead | undefined;
      /** The answered pause as phase 1 left it: taken under this lease where it could be (see `takeForPass`). */
      readonly taken?: PauseRecord | undefined;
    }
  | { readonly lease: Lease; readonly failed: unknown };
