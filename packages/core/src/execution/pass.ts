import { Command } from "@langchain/langgraph";
import { closePending, pendingOf } from "../answering/pause-book.js";
import type { AssembledFlow } from "../assembly/assembled-application.js";
import type { AnyClass } from "../container/component-registry.js";
import { ExecutionContext, type ExecutionFrame } from "../container/execution-context.js";
import { isStoreFault } from "../errors/app-errors.js";
import { AppClosedError, ExecutionCancelledError } from "../errors/runtime-errors.js";
import type { CompiledFlow } from "../graph/compile-flow.js";
import { flowHoldsLaunch } from "../graph/decided-launches.js";
import { finishOutput } from "../graph/finish-output.js";
import type { FlowStateValue } from "../graph/flow-state.js";
import { LogLevel } from "../logging/logger.js";
import type { PauseRecord } from "../pauses/pause-record.js";
import { PauseResolution, PauseStatus } from "../pauses/pause-status.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import { ExecutionStatus } from "../records/execution-status.js";
import type { PauseEntry } from "../records/pause-entry.js";
import { tellFollowersFailed, tellFollowersRested } from "../services/followers.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { frameAttributes } from "../services/tracing.js";
import { keepLeaseAlive } from "../services/tree-lease.js";
import {
  CHECKPOINT_HISTORY_CONFIG_KEY,
  type CheckpointHistory,
  forgetKeptRead,
  forgetReadAhead,
  KEEP_READ_CONFIG_KEY,
  KEPT_READ_CONFIG_KEY,
  NO_CHECKPOINT_CONFIG_KEY,
  type ReadAhead,
} from "../store/checkpoint-history.js";
import { FENCE_CONFIG_KEY, isLeaseLost } from "../store/fence.js";
import type { Lease } from "../store/lease-repository.js";
import { withAuditTrail } from "./child-records.js";
import type { ExecutionEventEmitter } from "./event-emitter.js";
import { ExecutionAbortedError, ExecutionEndedError, ExecutionInterruptedError } from "./execution-errors.js";
import type { ExecutionOutput } from "./execution-output.js";
import type { ExecutionRecorder } from "./execution-recorder.js";
import { CONTINUE, ENDED, type Tree } from "./tree.js";
import { owesWork, type PauseInterrupt, pauseIdOf, resumeMapOf, withdrawObsolete } from "./what-to-resume.js";

/**
 * Moves execution trees under their leases: one pass runs a tree from where it rests (a start, an
 * answer, a recovery) to its next rest, records how it rested, and fires the matching event. The
 * facade, the answering path and the recovery sweep all move trees through it.
 * @internal
 */
export class TreeMover {
  /** The passes this process runs, by lease key: `app.cancel` and `app.close` abort them. */
  readonly running = new Map<string, AbortController>();
  readonly #services: RuntimeServices;
  readonly #graphs: ReadonlyMap<AnyClass, CompiledFlow>;
  readonly #recorder: ExecutionRecorder;
  readonly #events: ExecutionEventEmitter;

  constructor(args: {
    services: RuntimeServices;
    graphs: ReadonlyMap<AnyClass, CompiledFlow>;
    recorder: ExecutionRecorder;
    events: ExecutionEventEmitter;
  }) {
    this.#services = args.services;
    this.#graphs = args.graphs;
    this.#recorder = args.recorder;
    this.#events = args.events;
  }

  /**
   * Moves a tree under its lease until it rests (paused with a pending pause, or ended). `CONTINUE`
   * goes on from the tree's last checkpoint: every answered pause (Resolved, or Taken by a holder that
   * died) is resumed, a step that was cut off mid-way runs again, and a tree with nothing left to do
   * ends at once. Before resting paused, pauses resolved meanwhile are taken too.
   *
   * Every record it writes is fenced by the lease, and it fires exactly one of `onExecutionFinish` /
   * `onExecutionError`, after the record that says so is stored. A holder that lost the lease, or a
   * store that cannot be reached, ends the pass with that error and leaves the tree to recovery; so does
   * the caller's `signal` (with `ExecutionAbortedError`), which also releases the lease.
   */
  async move(args: {
    readonly tree: Tree;
    readonly lease: Lease;
    /** A start command, or `CONTINUE` to go on from the tree's last checkpoint. */
    readonly first: unknown;
    /** Return the execution record with the output. */
    readonly withRecord: boolean;
    /** The caller's signal: aborting it stops the pass, leaving the tree running for recovery. */
    readonly signal?: AbortSignal | undefined;
    /** Hears what the pass's steps do as they happen (`app.stream`). */
    readonly progress?: ExecutionFrame["progress"];
    /** The pause the caller answered just before (as stored then), for the step that waits on it. */
    readonly answered?: PauseRecord | undefined;
    /** A start on a thread that did not exist before it: the thread has no checkpoint to read. */
    readonly newThread?: boolean | undefined;
    /** The tree's checkpoint, read ahead under this lease (see `ReadsAhead`), for a `CONTINUE`'s first read. */
    readonly readAhead?: ReadAhead | undefined;
  }): Promise<ExecutionOutput> {
    const { tree, lease, first, withRecord, signal, progress, answered } = args;
    const controller = new AbortController();
    this.running.set(lease.key, controller);
    const onAbort = () =>
      controller.abort(
        new ExecutionAbortedError({
          executionId: tree.frame.executionId,
          threadId: tree.frame.threadId,
          reason: signal?.reason,
        }),
      );
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    const span = this.#services.tracing?.start(`agboss.execution ${tree.frame.workflow.name}`, () => ({
      ...frameAttributes(tree.frame),
      "agboss.workflow_version": tree.frame.workflow.version,
      "agboss.pass": first === CONTINUE ? "continue" : "start",
    }));
    // Shared by the pass (what to resume) and its steps (through the frame), which take their entry.
    const answeredNow = answered === undefined ? undefined : new Map([[answered.pauseId, answered]]);
    const holdsLaunch = flowHoldsLaunch(
      tree.flow,
      (start) => this.#services.assembled.flows.get(start) as AssembledFlow,
    );
    const heartbeat = keepLeaseAlive(this.#services, lease, (lost) => controller.abort(lost));
    let released = false;
    // Once the lease is let go, the pass no longer moves the tree (its events may still be running): a
    // cancel in this process then takes the lease like any other, instead of aborting a pass that is done.
    const moving = () => {
      if (this.running.get(lease.key) === controller) this.running.delete(lease.key);
    };
    const pass: Pass = {
      tree,
      invoked: false,
      lease,
      withRecord,
      starts: first !== CONTINUE,
      newThread: first !== CONTINUE && args.newThread === true,
      controller,
      graph: this.#graphs.get(tree.flow.start.cls) as CompiledFlow,
      frame: {
        ...tree.frame,
        signal: controller.signal,
        progress,
        traceSpan: span,
        ...(answeredNow === undefined ? {} : { answered: answeredNow }),
        ...(first === CONTINUE ? {} : { starting: true }),
      },
      answered: answeredNow,
      readAhead: { unread: first === CONTINUE ? args.readAhead : undefined },
      holdsLaunch,
      release: async () => {
        if (released) return;
        released = true;
        heartbeat.stop();
        await this.#services.store.leases.release(lease);
      },
      saveLast: async (record) => {
        // The heartbeat stops first: a renewal landing after the release would hold the tree 30 s.
        heartbeat.stop();
        // Out of the moving trees before the write, in the tick its caller checked for a cancel: a cancel
        // from now on takes the lease (this write, fenced, lands before it or fails), rather than writing
        // without it while the lease passes to another instance's resume.
        moving();
        await this.#recorder.save(record, lease, { release: true });
        released = true;
      },
    };
    try {
      const output = await this.#run(
        pass,
        first === CONTINUE && goesOnUnread(tree, answered, holdsLaunch) ? null : first,
      );
      tellFollowersRested(this.#services, tree.frame, output);
      span?.set({ "agboss.execution.status": output.status });
      span?.end();
      return output;
    } catch (error) {
      const thrown = await this.#stopped(pass, error);
      span?.end(thrown);
      throw thrown;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      moving();
      heartbeat.stop();
      const unread = pass.readAhead.unread;
      // A pass that ended before its first read (a tree another pass had ended) leaves it to nobody.
      if (unread !== undefined) forgetReadAhead(this.#services.store.checkpointer, unread);
      // An app closing mid-pass lets the lease lapse instead: a tool it cut off may still be running,
      // and no other call must start it again before the lease says this one is gone. So does a pass
      // the store failed once its graph ran: a task that threw the fault may have left siblings running
      // (their signal is aborted, but a tool may not heed it), and the release would most likely fail.
      const reason = controller.signal.reason;
      const lapses = reason instanceof AppClosedError || (pass.invoked && isStoreFault(reason));
      if (!lapses) {
        await pass.release().catch((error: unknown) => this.#releaseFailed(pass, error));
      }
    }
  }

  /** The body of a pass: runs the graph until it interrupts with nothing left to take, or finishes. */
  async #run(pass: Pass, first: unknown): Promise<ExecutionOutput> {
    const { tree, frame } = pass;
    const storedStatus = tree.stored?.status;
    if (first === CONTINUE && storedStatus !== undefined && ENDED.has(storedStatus)) {
      // Ended by a pass that ran while this one waited for the lease (an answer it took on the way
      // failed the tree, say): report how it ended; a Taken pause of it is not run again.
      const snapshot = await pass.graph.getState(configOf(pass));
      const ended = await this.#endedElsewhere(pass, snapshot.values as FlowStateValue);
      if (ended !== undefined) return ended;
    }
    let ran = await this.#advance(pass, first);
    let moved = ran.moved;
    for (let look = 1; ; look += 1) {
      if (ran.finished !== undefined) return this.#complete(pass, ran.finished);
      if (ran.rest !== undefined && ran.rest.waiting.length > 0) {
        return this.#restPaused(pass, ran.rest.values, ran.rest.waiting, ran.rest.audit);
      }
      const snapshot = ran.snapshot ?? (await pass.graph.getState(configOf(pass)));
      const waiting =
        snapshot.next.length === 0
          ? []
          : await this.#services.store.pauses.list({
              tenantId: frame.tenant.tenantId,
              rootExecutionId: frame.rootExecutionId,
              statuses: [PauseStatus.Pending],
            });
      if (waiting.length > 0) return this.#restPaused(pass, snapshot.values as FlowStateValue, waiting);
      const finished = snapshot.values as FlowStateValue;
      if (snapshot.next.length > 0 && look < MAX_LOOKS) {
        // Interrupted, and no pause pending: one was answered between the resume map's read and this
        // list. Go on from the checkpoint again (it takes that answer) instead of ending unfinished.
        ran = await this.#advance(pass, CONTINUE);
        moved ||= ran.moved;
        continue;
      }
      if (!moved || snapshot.next.length > 0) {
        // Nothing ran, or the tree cannot move (its pauses were cancelled): report how it ended.
        const ended = await this.#endedElsewhere(pass, finished);
        if (ended !== undefined) return ended;
      }
      return this.#complete(pass, finished);
    }
  }

  /**
   * Invokes the graph from `first` (a start command; `CONTINUE`: every answered or withdrawn pause, or
   * the step cut off mid-way, read from the state first; or `null`, see {@link goesOnUnread}), and again
   * after each interrupt while pauses were resolved meanwhile (the drain). Returns the finished state, or
   * the last snapshot when the tree waits.
   */
  async #advance(pass: Pass, first: unknown): Promise<Advanced> {
    const { graph, frame, lease } = pass;
    let command = first;
    let snapshot: Snapshot | undefined;
    let moved = false;
    for (;;) {
      // The token under which the checkpointer keeps this read of the checkpoint for invoke's.
      let kept: string | undefined;
      // The read begun ahead of the pass (see `ReadsAhead`), which its first read takes.
      let ahead: ReadAhead | undefined;
      let out: FlowStateValue & { __interrupt__?: readonly PauseInterrupt[] };
      try {
        // The pass's first read takes the read ahead: a CONTINUE's state read, or invoke's own.
        ahead = pass.readAhead.unread;
        pass.readAhead.unread = undefined;
        if (ahead !== undefined) await ahead.done;
        if (command !== CONTINUE && ahead !== undefined) {
          kept = ahead.token;
          ahead = undefined;
        } else if (command === CONTINUE) {
          kept = `${lease.key}#${++keptReads}`;
          snapshot = await graph.getState({
            configurable: {
              thread_id: lease.key,
              [KEEP_READ_CONFIG_KEY]: kept,
              ...(ahead === undefined ? {} : { [KEPT_READ_CONFIG_KEY]: ahead.token }),
            },
          });
          if ((snapshot.values as Partial<FlowStateValue>).run?.executionId !== frame.executionId) {
            // Recorded as started, but its first checkpoint never landed: its process died at the start.
            throw new ExecutionInterruptedError(frame.executionId);
          }
          await withdrawObsolete(this.#services, this.#graphs, { tree: pass.tree, snapshot, lease });
          const map = await resumeMapOf(this.#services, frame.tenant.tenantId, snapshot, pass.answered);
          if (Object.keys(map).length > 0) command = new Command({ resume: map });
          else if (owesWork(snapshot)) command = null;
          else return { snapshot, moved };
        }
        // Stopped already (the caller's signal, a lost lease): invoke would store the start's checkpoint
        // before it looked, and a start aborted before the graph ran would then be left for recovery.
        pass.controller.signal.throwIfAborted();
        moved = true;
        pass.invoked = true;
        out = (await ExecutionContext.run(frame, () =>
          graph.invoke(command as never, {
            // A pass reads only the latest checkpoint of each namespace (its own and its subgraphs', which
            // inherit this config): the checkpointer may delete what each put supersedes, in its transaction.
            configurable: {
              thread_id: lease.key,
              [FENCE_CONFIG_KEY]: { key: lease.key, epoch: lease.epoch },
              [CHECKPOINT_HISTORY_CONFIG_KEY]: "latest" satisfies CheckpointHistory,
              ...(kept === undefined ? {} : { [KEPT_READ_CONFIG_KEY]: kept }),
              // The start's own invoke on a new thread: nothing to read (a drain's next invoke reads).
              ...(pass.newThread && command === first ? { [NO_CHECKPOINT_CONFIG_KEY]: true } : {}),
            },
            signal: pass.controller.signal,
            recursionLimit: 10_000,
            // Each step's checkpoint is handed to the checkpointer before the next step's tasks run, so a
            // write those tasks wait for (the pause before its question is sent) is committed with it.
            durability: "sync",
          }),
        )) as FlowStateValue & { __interrupt__?: readonly PauseInterrupt[] };
      } finally {
        // A kept read that invoke did not take (the pass ended first, or invoke failed before its read),
        // and a read ahead the first read did not take (it failed first).
        if (kept !== undefined) forgetKeptRead(this.#services.store.checkpointer, kept);
        if (ahead !== undefined) forgetKeptRead(this.#services.store.checkpointer, ahead.token);
      }
      if (out.__interrupt__ === undefined) return { finished: out, moved };
      // Before resting, take the pauses resolved while this pass ran (the drain). The audit trail, where
      // the output shows it, is read alongside, not after it: on a pool the two reads overlap.
      if (pass.holdsLaunch) {
        command = CONTINUE;
        continue;
      }
      const audit = showsAudit(pass, out as FlowStateValue)
        ? this.#recorder.audit(frame.tenant.tenantId, frame.rootExecutionId)
        : undefined;
      // Not read when the pass goes on instead; whoever waits for it still sees how it failed.
      audit?.catch(() => undefined);
      const drained = await this.#drain(pass, out.__interrupt__);
      if (drained === undefined) command = CONTINUE;
      else if (drained.resume !== undefined) command = drained.resume;
      else return { rest: { values: out, waiting: drained.waiting, audit }, moved };
    }
  }

  /**
   * What follows an interrupt in a tree without launches (nothing there is withdrawn by a launch), read
   * from the interrupts the graph returned and one list of the tree's open pauses, without reading the
   * checkpoint back: the pauses answered meanwhile to resume, or the pending ones to rest on. Undefined
   * when a pause was answered that none of the interrupts waits on: the checkpoint is read as usual.
   */
  async #drain(
    pass: Pass,
    interrupts: readonly PauseInterrupt[],
  ): Promise<{ resume?: Command; waiting: readonly PauseRecord[] } | undefined> {
    const { frame } = pass;
    const open = await this.#services.store.pauses.list({
      tenantId: frame.tenant.tenantId,
      rootExecutionId: frame.rootExecutionId,
      statuses: [PauseStatus.Pending, PauseStatus.Resolved],
    });
    const waiting = open.filter((p) => p.status === PauseStatus.Pending);
    const answered = new Set(open.filter((p) => p.status === PauseStatus.Resolved).map((p) => p.pauseId));
    if (answered.size === 0) return { waiting };
    const map: Record<string, { pauseId: string }> = {};
    for (const pending of interrupts) {
      const pauseId = pauseIdOf(pending);
      if (pending.id === undefined || pauseId === undefined || !answered.has(pauseId)) continue;
      map[pending.id] = { pauseId };
      answered.delete(pauseId);
    }
    if (answered.size > 0) return undefined;
    return { resume: new Command({ resume: map }), waiting };
  }

  /**
   * Rests the tree paused: its record is stored under the lease and the lease released, in one write
   * (a release that landed first would let another holder in before the record's fence check).
   */
  async #restPaused(
    pass: Pass,
    values: FlowStateValue,
    waiting: readonly PauseRecord[],
    audit?: Promise<PauseEntry[]>,
  ): Promise<ExecutionOutput> {
    const { tree, frame } = pass;
    const pending = waiting.map((p) => pendingOf(this.#services.assembled, p));
    const record = this.#recorder.build(tree, {
      status: ExecutionStatus.Paused,
      state: values,
      pauses: showsAudit(pass, values)
        ? await (audit ?? this.#recorder.audit(frame.tenant.tenantId, frame.rootExecutionId))
        : [],
    });
    throwIfCancelled(pass);
    await pass.saveLast(record);
    await this.#events.emit("onExecutionPause", { ...this.#events.base(frame), pending });
    return {
      status: ExecutionStatus.Paused,
      output: undefined,
      threadId: frame.threadId,
      executionId: frame.executionId,
      pending,
      children: record.children ?? [],
      ...(pass.withRecord ? { record } : {}),
    };
  }

  /** Ends the tree completed: its output validated, its record stored under the lease, then the event. */
  async #complete(pass: Pass, finished: FlowStateValue): Promise<ExecutionOutput> {
    const { tree, frame, withRecord } = pass;
    const state = finishOutput(tree.flow, finished);
    const record = this.#recorder.build(tree, {
      status: ExecutionStatus.Completed,
      state,
      pauses: showsAudit(pass, state)
        ? await this.#recorder.audit(frame.tenant.tenantId, frame.rootExecutionId)
        : [],
    });
    throwIfCancelled(pass);
    await pass.saveLast(record);
    const output: ExecutionOutput = {
      status: ExecutionStatus.Completed,
      output: state.run.output,
      threadId: frame.threadId,
      executionId: frame.executionId,
      pending: [],
      children: record.children ?? [],
      ...(withRecord ? { record } : {}),
    };
    await this.#events.emit("onExecutionFinish", { ...this.#events.base(frame), output });
    return output;
  }

  /**
   * What a pass that threw leaves behind, and the error its caller gets. A holder that lost the lease
   * leaves the tree to the new holder and cleans nothing up; an unreachable store, or an app closing
   * mid-pass, is no failure of the work (the execution stays as stored, and recovery carries it on);
   * anything else fails the tree, or cancels it when `app.cancel` stopped the pass.
   */
  async #stopped(pass: Pass, error: unknown): Promise<unknown> {
    const { signal } = pass.controller;
    const stopped = signal.aborted ? signal.reason : undefined;
    // Whatever of the pass still runs stops now, before anything is recorded: a task of the graph that
    // threw leaves its siblings' functions running (LangGraph only stops waiting for them), with their
    // tools and model calls.
    if (stopped === undefined) pass.controller.abort(error);
    if (isLeaseLost(stopped)) return this.#lost(pass, stopped);
    if (isLeaseLost(error)) return this.#lost(pass, error);
    // Another pass ended the tree and fired its event: this one reports that, and ends nothing.
    if (error instanceof ExecutionEndedError) return error;
    if (isStoreFault(error) || stopped instanceof AppClosedError) {
      this.#leftForRecovery(pass.frame, stopped ?? error);
      return stopped ?? error;
    }
    if (stopped instanceof ExecutionAbortedError) {
      if (pass.starts && !(await this.#checkpointed(pass))) {
        // Stopped before its first step was stored: there is nothing to carry on (the sweep could only
        // fail it as interrupted). It ends as cancelled, and the thread is free at once.
        const { frame } = pass;
        const early = new ExecutionAbortedError({
          executionId: frame.executionId,
          threadId: frame.threadId,
          reason: stopped.cause,
          beforeFirstStep: true,
        });
        await this.#fail(pass, ExecutionStatus.Cancelled, early);
        return early;
      }
      // The caller stopped waiting: no failure of the work. The tree stays recorded as running and the
      // lease is released, so the sweep carries it on (a step cut off mid-way runs again) or
      // `app.cancel` ends it.
      this.#leftForRecovery(pass.frame, stopped);
      return stopped;
    }
    const cancelled = stopped !== undefined;
    const thrown = cancelled && stopped instanceof Error ? stopped : error;
    await this.#fail(pass, cancelled ? ExecutionStatus.Cancelled : ExecutionStatus.Failed, thrown);
    return thrown;
  }

  /**
   * Whether the execution's first step was stored: a checkpoint names it (the start's own, stored as the
   * graph begins when it starts by command; after plain input, that of its first step). An aborted `invoke` returns
   * before LangGraph's checkpoint writes in flight have landed, so a missing one is looked for again a
   * few times before the answer is no.
   */
  async #checkpointed(pass: Pass): Promise<boolean> {
    for (let look = 0; ; look += 1) {
      const snapshot = await pass.graph.getState(configOf(pass)).catch(() => undefined);
      const run = (snapshot?.values as Partial<FlowStateValue> | undefined)?.run;
      if (run?.executionId === pass.frame.executionId) return true;
      if (look === CHECKPOINT_LOOKS) return false;
      await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_LOOK_MS));
    }
  }

  /**
   * What a pass that lost its lease reports: `ExecutionEndedError` when the tree was cancelled meanwhile
   * (`app.cancel` on another instance takes the lease over), else the lost lease itself.
   */
  async #lost(pass: Pass, lost: unknown): Promise<unknown> {
    const { frame } = pass.tree;
    const stored = await this.#services.store.executions
      .findByTenantIdAndExecutionId(frame.tenant.tenantId, frame.executionId)
      .catch(() => undefined);
    if (stored?.status !== ExecutionStatus.Cancelled) return lost;
    return new ExecutionEndedError(frame.executionId, ExecutionStatus.Cancelled, undefined, {
      while: "running",
    });
  }

  /**
   * A pass that moved nothing and found the tree ended: a pass that waited for the lease behind the one
   * that ended it reports how it ended, and does not end it again. Undefined when the record does not
   * say it ended (its holder died after the last step): this pass records the end.
   */
  async #endedElsewhere(pass: Pass, finished: FlowStateValue): Promise<ExecutionOutput | undefined> {
    const { tree, withRecord } = pass;
    const tenantId = tree.frame.tenant.tenantId;
    const { frame } = tree;
    const stored = await this.#services.store.executions.findByTenantIdAndExecutionId(
      tenantId,
      frame.executionId,
    );
    const ended = stored?.record as ExecutionRecord | undefined;
    if (ended?.status === ExecutionStatus.Failed || ended?.status === ExecutionStatus.Cancelled) {
      throw new ExecutionEndedError(frame.executionId, ended.status, ended.error);
    }
    if (ended?.status !== ExecutionStatus.Completed) return undefined;
    if (finished.run?.executionId !== frame.executionId) {
      // The thread moved on: an execution started on it after this one ended, while this pass waited
      // for the lease, and the state is that one's. Reported as recorded (the record's output is masked
      // where its DTO says so, as `app.record` shows it), never from the later execution's state.
      const shown = withRecord || (ended.children ?? []).length > 0;
      const record = withAuditTrail(
        ended,
        shown ? await this.#recorder.audit(tenantId, frame.rootExecutionId) : [],
      );
      return {
        status: ExecutionStatus.Completed,
        output: ended.output,
        threadId: frame.threadId,
        executionId: frame.executionId,
        pending: [],
        children: record.children ?? [],
        ...(withRecord ? { record } : {}),
      };
    }
    const state = finishOutput(tree.flow, finished);
    // As the pass that ended it returned it (see #complete): its children, each with its own pauses.
    const record = this.#recorder.build(tree, {
      status: ExecutionStatus.Completed,
      state,
      pauses: showsAudit(pass, state) ? await this.#recorder.audit(tenantId, frame.rootExecutionId) : [],
    });
    return {
      status: ExecutionStatus.Completed,
      output: state.run.output,
      threadId: frame.threadId,
      executionId: frame.executionId,
      pending: [],
      children: record.children ?? [],
      ...(withRecord ? { record } : {}),
    };
  }

  /**
   * Ends a tree that failed (or was cancelled): its pending pauses are cancelled, the record stored,
   * then `onExecutionError` fires. All under the lease: a holder that lost it throws `LeaseLostError`
   * and fires nothing; a record that could not be stored fires nothing either (recovery runs the tree
   * again and ends it), so an execution never gets both an error and a finish.
   */
  async #fail(pass: Pass, status: ExecutionStatus, thrown: unknown): Promise<void> {
    const { tree, lease } = pass;
    const { frame } = tree;
    const tenantId = frame.tenant.tenantId;
    const state = await pass.graph.getState(configOf(pass)).catch(() => undefined);
    try {
      await closePending(this.#services, {
        tenantId,
        rootExecutionId: frame.rootExecutionId,
        resolution: PauseResolution.Cancelled,
        fence: lease,
      });
      const audit = await this.#recorder.audit(tenantId, frame.rootExecutionId);
      await pass.saveLast(
        this.#recorder.build(tree, {
          status,
          state: state?.values as FlowStateValue | undefined,
          error: thrown,
          pauses: audit,
        }),
      );
    } catch (recording) {
      if (isLeaseLost(recording)) throw recording;
      this.#leftForRecovery(frame, recording);
      return;
    }
    await this.#events.emit("onExecutionError", { ...this.#events.base(frame), error: thrown });
    tellFollowersFailed(this.#services, { ...frame, tenantId }, thrown);
  }

  /** A release that failed after the pass's last write: the lease lapses on its own; only a log line. */
  #releaseFailed(pass: Pass, error: unknown): void {
    const { logger, clock } = this.#services;
    logger.log({
      level: LogLevel.Warn,
      event: "lease.release-failed",
      message: `releasing the lease ${pass.lease.key} failed (it lapses in 30 s): ${error instanceof Error ? error.message : String(error)}`,
      fields: { key: pass.lease.key },
      at: clock.now(),
    });
  }

  /** Logs that a pass stopped on a fault that is not the work's, leaving the tree to recovery. */
  #leftForRecovery(frame: ExecutionFrame, error: unknown): void {
    const { logger, clock } = this.#services;
    logger.log({
      level: LogLevel.Warn,
      event: "execution.left-for-recovery",
      message: `execution ${frame.rootExecutionId} stopped (${error instanceof Error ? error.message : String(error)}); the recovery sweep of any instance carries it on.`,
      fields: { tenantId: frame.tenant.tenantId, executionId: frame.executionId },
      at: clock.now(),
    });
  }
}

/** How many times a pass looks again for an answer that landed while it listed the pending pauses. */
const MAX_LOOKS = 3;

/**
 * Stops a pass that `app.cancel` aborted before it stores a rest or an end: the cancel has recorded the
 * execution cancelled (without taking this pass's lease), and a record stored after it would undo that.
 * A cancel that comes later finds the pass gone from the moving trees (see `saveLast`) and takes the
 * lease instead.
 */
function throwIfCancelled(pass: Pass): void {
  const { signal } = pass.controller;
  if (signal.aborted && signal.reason instanceof ExecutionCancelledError) throw signal.reason;
}

/**
 * Whether the record a pass builds from `state` shows the tree's audit trail: the caller asked for the
 * record, or the output lists the execution's finished children, each with its own pauses. The stored
 * record's trail is never read back (`app.record` reads the audit entries), so otherwise it is left
 * empty and the audit is not read.
 */
function showsAudit(pass: Pass, state: FlowStateValue | undefined): boolean {
  if (pass.withRecord) return true;
  const run = state?.run;
  return run?.executionId === pass.frame.executionId && Object.keys(run.children).length > 0;
}

/** How many times, and how far apart, an aborted start looks again for its first checkpoint. */
const CHECKPOINT_LOOKS = 10;
const CHECKPOINT_LOOK_MS = 20;

/** A snapshot of a compiled flow's state. */
type Snapshot = Awaited<ReturnType<CompiledFlow["getState"]>>;

/**
 * Where {@link TreeMover.#advance} stopped: the tree finished; or it rests on pending pauses (read without
 * the checkpoint); or the last snapshot, when the tree waits or cannot move.
 */
interface Advanced {
  readonly finished?: FlowStateValue;
  readonly rest?: {
    readonly values: FlowStateValue;
    readonly waiting: readonly PauseRecord[];
    /** The tree's audit trail, read while the pending pauses were, when the output shows it (see showsAudit). */
    readonly audit: Promise<PauseEntry[]> | undefined;
  };
  readonly snapshot?: Snapshot;
  readonly moved: boolean;
}

/** What one pass holds while it moves a tree. */
interface Pass {
  readonly tree: Tree;
  /** Set once the graph is invoked: from then on a task of it may still run after the pass stopped. */
  invoked: boolean;
  readonly lease: Lease;
  readonly withRecord: boolean;
  /** Whether the pass starts the execution (not a `CONTINUE`). */
  readonly starts: boolean;
  /** Whether it starts the execution on a new thread, which has no checkpoint (see `NO_CHECKPOINT_CONFIG_KEY`). */
  readonly newThread: boolean;
  readonly graph: CompiledFlow;
  /** Aborted by `app.cancel`, `app.close`, the caller's signal, or a heartbeat that found a newer holder. */
  readonly controller: AbortController;
  /** The tree's frame, with the pass's signal. */
  readonly frame: ExecutionFrame;
  /** Releases the lease once, after the pass's last record write. */
  readonly release: () => Promise<void>;
  /** Stores the pass's last record and releases its lease, in one write. */
  readonly saveLast: (record: ExecutionRecord) => Promise<void>;
  /** Whether the tree's flow (or a child flow) has a parallel launch, whose branches a pass may withdraw. */
  readonly holdsLaunch: boolean;
  /** The pause the caller answered just before the pass, by pauseId (the frame carries the same map). */
  readonly answered: ReadonlyMap<string, PauseRecord> | undefined;
  /** The tree's checkpoint read ahead for the pass's first read, until that read takes it. */
  readonly readAhead: { unread: ReadAhead | undefined };
}

/**
 * Whether a pass that goes on after `answered` was answered may open with `null` instead of `CONTINUE`:
 * every interrupted task runs again and its step reads its own pause (the answered one is taken and goes
 * on, a pending one interrupts again), so `null` resumes what a resume map would, without the state read
 * that builds the map. Only for a tree that rested paused (its checkpoint is the one its last pass rested
 * on, and no pass since took an answer) whose launches cannot have branches to withdraw first, and a
 * pause its step takes: an escalated one's step passes its interrupt, which only a resume lets through.
 */
function goesOnUnread(tree: Tree, answered: PauseRecord | undefined, holdsLaunch: boolean): boolean {
  return (
    // As phase 1 stored it: Resolved, or Taken there under this pass's lease.
    (answered?.status === PauseStatus.Resolved || answered?.status === PauseStatus.Taken) &&
    answered.resolution !== PauseResolution.Escalated &&
    !holdsLaunch &&
    tree.stored?.status === ExecutionStatus.Paused
  );
}

/** Numbers the reads a pass asks the checkpointer to keep for invoke's (see `KEEP_READ_CONFIG_KEY`). */
let keptReads = 0;

/** The LangGraph config that reads a tree's state. */
function configOf(pass: Pass) {
  return { configurable: { thread_id: pass.lease.key } };
}
