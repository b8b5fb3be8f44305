import { closePending } from "../answering/pause-book.js";
import type { AssembledFlow } from "../assembly/assembled-application.js";
import type { AnyClass } from "../container/component-registry.js";
import type { CompiledFlow } from "../graph/compile-flow.js";
import { decidedLaunches, type FlowSnapshot } from "../graph/decided-launches.js";
import type { FlowStateValue } from "../graph/flow-state.js";
import type { PauseRecord } from "../pauses/pause-record.js";
import { PauseResolution, PauseStatus } from "../pauses/pause-status.js";
import { ExecutionStatus } from "../records/execution-status.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import type { Lease } from "../store/lease-repository.js";
import type { Tree } from "./tree.js";

// What a pass resumes when it goes on from a tree's last checkpoint: the launches that no longer need
// their branches are settled first, then every answered or withdrawn pause is mapped to its interrupt,
// and a step cut off mid-way (no interrupt, no result) is run again.

/**
 * Withdraws the pending pauses of launches that no longer need their unfinished branches (a FailFast
 * failure, a passed deadline, a decided quorum) — the root's and those inside child executions, at any
 * depth — so their branches end and the joins run in this same call. Each withdrawn pause records the
 * outermost decided launch it waited under: a branch withdrawn by its own launch ends as withdrawn, one
 * withdrawn by a launch above it stops its whole child.
 */
export async function withdrawObsolete(
  services: RuntimeServices,
  graphs: ReadonlyMap<AnyClass, CompiledFlow>,
  at: { readonly tree: Tree; readonly snapshot: FlowSnapshot; readonly lease: Lease },
): Promise<void> {
  const { tree, snapshot, lease } = at;
  const state = snapshot.values as FlowStateValue | undefined;
  if (state?.run === undefined || state.run.executionId !== tree.frame.executionId) return;
  const { clock, assembled } = services;
  const flowOf = (start: AnyClass) => assembled.flows.get(start) as AssembledFlow;
  const decided = await decidedLaunches({
    flow: tree.flow,
    root: snapshot,
    now: clock.now(),
    flowOf,
    read: (start, checkpointNs) =>
      (graphs.get(start) as CompiledFlow).getState({
        configurable: { thread_id: lease.key, checkpoint_ns: checkpointNs },
      }),
  });
  if (decided.length === 0) return;
  const by = (pause: PauseRecord) =>
    (pause.step.branch?.launches ?? []).find((l) =>
      decided.some((d) => d.executionId === l.executionId && d.launchId === l.launchId),
    );
  await closePending(services, {
    tenantId: tree.frame.tenant.tenantId,
    rootExecutionId: tree.frame.rootExecutionId,
    resolution: PauseResolution.Withdrawn,
    filter: (pause) => by(pause) !== undefined,
    fence: lease,
    answerOf: (pause) => {
      const launch = by(pause);
      return launch === undefined
        ? undefined
        : { withdrawnBy: { executionId: launch.executionId, launchId: launch.launchId } };
    },
  });
}

/** A LangGraph interrupt, as a paused tool call raises it: its value names the pause. @internal */
export interface PauseInterrupt {
  readonly id?: string;
  readonly value?: unknown;
}

/** The pause a paused tool call's interrupt waits on, if it is one. @internal */
export function pauseIdOf(pending: PauseInterrupt): string | undefined {
  const pauseId = (pending.value as { pauseId?: unknown } | undefined)?.pauseId;
  return typeof pauseId === "string" ? pauseId : undefined;
}

/**
 * Interrupt ids of the snapshot whose pauses are answered (Resolved or Taken) or withdrawn, each mapped to
 * its pause. A pause in `answeredNow` (answered by this call just before, see `ExecutionFrame.answered`) is
 * not read again: an answered pause stays answered.
 */
export async function resumeMapOf(
  services: RuntimeServices,
  tenantId: string,
  snapshot: {
    tasks: readonly { interrupts?: readonly PauseInterrupt[]; result?: unknown }[];
  },
  answeredNow?: ReadonlyMap<string, PauseRecord>,
) {
  const map: Record<string, { pauseId: string }> = {};
  for (const task of snapshot.tasks) {
    // A task that ended (a branch withdrawn by a launch inside its child, say) still lists the interrupt
    // it was resumed from until its whole superstep ends: resuming it again would change nothing.
    if (task.result !== undefined) continue;
    for (const pending of task.interrupts ?? []) {
      const pauseId = pauseIdOf(pending);
      if (pauseId === undefined || pending.id === undefined) continue;
      const pause =
        answeredNow?.get(pauseId) ??
        (await services.store.pauses.findByTenantIdAndPauseId(tenantId, pauseId));
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

/**
 * Whether a tree whose last checkpoint has no answered pause to resume still owes work: a task of the
 * next superstep that neither ended nor waits on an interrupt (its holder died while it ran), or a
 * superstep whose tasks all ended (their writes are stored) while the checkpoint after it is not: its
 * holder died in between, and going on applies those writes and runs what comes next.
 */
export function owesWork(snapshot: {
  next: readonly string[];
  tasks: readonly { interrupts?: readonly unknown[]; result?: unknown }[];
}): boolean {
  // (A superstep whose tasks all ended lists them with their results, and no `next`.)
  if (snapshot.tasks.length === 0) return false;
  const ended = (task: { result?: unknown }) => task.result !== undefined;
  return (
    snapshot.tasks.every(ended) ||
    snapshot.tasks.some((task) => !ended(task) && (task.interrupts ?? []).length === 0)
  );
}

/**
 * Takes an answered pause (Resolved → Taken) for the pass about to go on from it, under the lease the
 * caller just claimed and in the same unit of work (`app.resume`'s phase 1, the sweep's claim of a
 * tree): the step waiting on it then writes nothing before its tool (see `ExecutionFrame.answered`).
 * Only for a tree that rests paused, whose pass runs that step; an escalated pause, whose step passes
 * its interrupt instead, and a pause no longer Resolved are left as they are. Returns the pause the pass
 * goes on from: taken, or as given. (A process that dies after this commit leaves the tree running
 * with a lapsed lease; recovery runs the step from its Taken pause.)
 */
export async function takeForPass(
  services: RuntimeServices,
  answered: PauseRecord,
  at: { readonly tree: Tree; readonly lease: Lease },
): Promise<PauseRecord> {
  if (answered.status !== PauseStatus.Resolved || answered.resolution === PauseResolution.Escalated) {
    return answered;
  }
  if (at.tree.stored?.status !== ExecutionStatus.Paused) return answered;
  const { store, clock } = services;
  const taken = await store.pauses.take(answered.tenantId, answered.pauseId, { at: clock.now() }, at.lease);
  return taken ?? answered;
}
