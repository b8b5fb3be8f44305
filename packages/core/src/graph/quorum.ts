import {
  BranchVerdict,
  type QuorumBranchResult,
  QuorumDecidedBy,
  type QuorumJoinOutput,
  QuorumOutcome,
} from "../flow/branch-verdict.js";
import type { Quorum } from "../flow/quorum-options.js";
import { type Duration, toMilliseconds } from "../time/duration.js";
import type { BranchResult } from "./flow-state.js";

/** A launch as a quorum sees it. @internal */
export interface QuorumLaunch {
  /** When the launch started, on the application's Clock. */
  readonly startedAt: number;
  /** How many branches it sent; undefined when not known (then it cannot be found unreachable early). */
  readonly branches: number | undefined;
  /** The branches that ended so far, in any order. */
  readonly results: readonly BranchResult[];
}

/** What a quorum makes of a launch at one moment. @internal */
export interface QuorumEvaluation {
  readonly decided: boolean;
  /** Set once decided. */
  readonly outcome: QuorumOutcome | undefined;
  readonly decidedBy: QuorumDecidedBy | undefined;
  /** The winning group of a group quorum. */
  readonly group: string | undefined;
  /** Each ended branch's verdict (and group), by branch index. */
  readonly verdicts: ReadonlyMap<number, { readonly verdict: BranchVerdict; readonly group?: string }>;
  readonly counted: number;
  /** Per group, for a group quorum. */
  readonly tally: Readonly<Record<string, number>> | undefined;
}

interface Decision {
  readonly outcome: QuorumOutcome;
  readonly decidedBy: QuorumDecidedBy;
  readonly group?: string;
}

/** The earlier of the launch's and the quorum's deadlines, in milliseconds from the launch. @internal */
export function quorumDeadlineMs(quorum: Quorum, launchDeadline: Duration | undefined): number | undefined {
  const all = [launchDeadline, quorum.deadline].filter((d): d is Duration => d !== undefined);
  return all.length === 0 ? undefined : Math.min(...all.map((d) => toMilliseconds(d)));
}

/** When a branch ended, for ordering: its stamp, else the launch's start (results written before stamps). */
function endedAt(result: BranchResult, startedAt: number): number {
  return result.endedAt ?? startedAt;
}

/**
 * Replays a launch's ended branches in the order they ended and says whether (and how) its quorum is
 * decided at `now`: `max` counted (or a group reached it), `max` no longer reachable (and waiting could
 * not change whether `min` is met), or the deadline passed. A branch that ended after the decision is
 * surplus (or failed). Pure: calls only the quorum's predicates. @internal
 */
export function evaluateQuorum(
  quorum: Quorum,
  launch: QuorumLaunch,
  now: number,
  deadlineMs: number | undefined,
): QuorumEvaluation {
  const { startedAt, branches } = launch;
  const deadlineAt = deadlineMs === undefined ? undefined : startedAt + deadlineMs;
  const max = quorum.max;
  const min = quorum.kind === "count" ? (quorum.min ?? max) : max;
  const groups = quorum.kind === "groups" ? Object.entries(quorum.groups) : [];
  const tally: Record<string, number> = Object.fromEntries(groups.map(([name]) => [name, 0]));
  const verdicts = new Map<number, { verdict: BranchVerdict; group?: string }>();
  let counted = 0;
  let ended = 0;
  let decision: Decision | undefined;

  const byDeadline = (): Decision => ({
    outcome: quorum.kind === "count" && counted >= min ? QuorumOutcome.Won : QuorumOutcome.Lost,
    decidedBy: QuorumDecidedBy.Deadline,
  });
  const check = (): Decision | undefined => {
    const remaining = branches === undefined ? Number.POSITIVE_INFINITY : Math.max(0, branches - ended);
    if (quorum.kind === "count") {
      if (counted >= max) return { outcome: QuorumOutcome.Won, decidedBy: QuorumDecidedBy.Max };
      if (counted + remaining >= max) return undefined;
      if (counted >= min) return { outcome: QuorumOutcome.Won, decidedBy: QuorumDecidedBy.Unreachable };
      if (counted + remaining < min)
        return { outcome: QuorumOutcome.Lost, decidedBy: QuorumDecidedBy.Unreachable };
      return undefined;
    }
    const winner = groups.find(([name]) => (tally[name] ?? 0) >= max);
    if (winner !== undefined)
      return { outcome: QuorumOutcome.Won, decidedBy: QuorumDecidedBy.Max, group: winner[0] };
    if (groups.every(([name]) => (tally[name] ?? 0) + remaining < max))
      return { outcome: QuorumOutcome.Lost, decidedBy: QuorumDecidedBy.Unreachable };
    return undefined;
  };

  const ordered = [...launch.results].sort(
    (a, b) =>
      endedAt(a, startedAt) - endedAt(b, startedAt) || (a.endSeq ?? 0) - (b.endSeq ?? 0) || a.index - b.index,
  );
  decision = check();
  for (const result of ordered) {
    if (decision === undefined && deadlineAt !== undefined && endedAt(result, startedAt) >= deadlineAt)
      decision = byDeadline();
    ended += 1;
    if (result.error !== undefined) {
      verdicts.set(result.index, { verdict: BranchVerdict.Failed });
    } else if (decision !== undefined || result.withdrawn === true) {
      verdicts.set(result.index, { verdict: BranchVerdict.Surplus });
    } else {
      const branch = { index: result.index, branch: result.branch, itemIndex: result.itemIndex };
      if (quorum.kind === "count") {
        const counts = quorum.count === undefined ? true : quorum.count(result.output, branch);
        if (counts) counted += 1;
        verdicts.set(result.index, { verdict: counts ? BranchVerdict.Counted : BranchVerdict.NotCounted });
      } else {
        const joined = groups.find(([, predicate]) => predicate(result.output, branch))?.[0];
        if (joined === undefined) verdicts.set(result.index, { verdict: BranchVerdict.NotCounted });
        else {
          tally[joined] = (tally[joined] ?? 0) + 1;
          counted += 1;
          verdicts.set(result.index, { verdict: BranchVerdict.Counted, group: joined });
        }
      }
    }
    decision ??= check();
  }
  if (decision === undefined && deadlineAt !== undefined && now >= deadlineAt) decision = byDeadline();
  return {
    decided: decision !== undefined,
    outcome: decision?.outcome,
    decidedBy: decision?.decidedBy,
    group: decision?.group,
    verdicts,
    counted,
    tally: quorum.kind === "groups" ? tally : undefined,
  };
}

/**
 * The output of a quorum join over every ended branch (`launch.results`, all of them): the outcome and
 * each branch's verdict, in launch order. @internal
 */
export function quorumJoinOutput(
  quorum: Quorum,
  launch: QuorumLaunch,
  now: number,
  deadlineMs: number | undefined,
): QuorumJoinOutput {
  // Every branch has ended: what is not decided by now cannot reach max any more.
  const evaluation = evaluateQuorum(quorum, { ...launch, branches: launch.results.length }, now, deadlineMs);
  const results = [...launch.results]
    .sort((a, b) => a.index - b.index)
    .map((r): QuorumBranchResult => {
      const judged = evaluation.verdicts.get(r.index);
      return {
        index: r.index,
        branch: r.branch,
        ...(r.itemIndex === undefined ? {} : { itemIndex: r.itemIndex }),
        verdict: judged?.verdict ?? BranchVerdict.Surplus,
        ...(judged?.group === undefined ? {} : { group: judged.group }),
        ...("output" in r && r.output !== undefined ? { output: r.output } : {}),
        ...(r.error === undefined ? {} : { error: r.error }),
        ...(r.withdrawn === true ? { withdrawn: true } : {}),
      };
    });
  return {
    outcome: evaluation.outcome ?? QuorumOutcome.Lost,
    decidedBy: evaluation.decidedBy ?? QuorumDecidedBy.Unreachable,
    ...(evaluation.group === undefined ? {} : { group: evaluation.group }),
    max: quorum.max,
    counted: evaluation.counted,
    ...(evaluation.tally === undefined ? {} : { tally: evaluation.tally }),
    results,
  };
}
