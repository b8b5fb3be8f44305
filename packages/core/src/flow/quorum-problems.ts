import { toMilliseconds } from "../time/duration.js";
import type { Quorum } from "./quorum-options.js";

/** What is wrong with a quorum, as sentences; `branches` when the launch's branch count is known. @internal */
export function quorumProblems(quorum: Quorum, branches: number | undefined): string[] {
  const problems: string[] = [];
  const whole = (n: unknown) => typeof n === "number" && Number.isInteger(n) && n >= 1;
  const what = quorum.kind === "count" ? "joinQuorum" : "joinQuorumGroups";
  if (!whole(quorum.max))
    problems.push(`${what}({ max: ${String(quorum.max)} }) needs a whole number of at least 1.`);
  else if (branches !== undefined && quorum.max > branches)
    problems.push(
      `${what}({ max: ${quorum.max} }) can never be reached by a launch of ${branches} branch${branches === 1 ? "" : "es"}.`,
    );
  if (quorum.kind === "count") {
    if (quorum.min !== undefined && (!whole(quorum.min) || (whole(quorum.max) && quorum.min > quorum.max)))
      problems.push(`joinQuorum({ min: ${String(quorum.min)} }) needs a whole number from 1 to max.`);
    if (quorum.count !== undefined && typeof quorum.count !== "function")
      problems.push("joinQuorum({ count }) must be a function of a branch's output.");
  } else {
    const entries = Object.entries(quorum.groups ?? {});
    if (entries.length === 0)
      problems.push("joinQuorumGroups({ groups }) names no group; give at least one.");
    for (const [name, predicate] of entries)
      if (typeof predicate !== "function")
        problems.push(`joinQuorumGroups: group "${name}" must be a function of a branch's output.`);
  }
  if (quorum.deadline !== undefined && !(toMilliseconds(quorum.deadline) > 0))
    problems.push(`${what}({ deadline }) must be a positive duration.`);
  return problems;
}
