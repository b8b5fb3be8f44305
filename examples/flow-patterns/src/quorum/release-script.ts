import {
  type ChatRequest,
  callTool,
  type QuorumJoinOutput,
  replyWith,
  type ScriptedTurn,
} from "@agboss/core";
import { SignOffTool } from "./sign-off-tool.js";

/** The reviewer an agent plays, read from who calls (`agent:legal-reviewer-agent` → `legal`). */
function reviewerOf(request: ChatRequest): string {
  return request.caller.replace(/^agent:/, "").replace(/-reviewer-agent$/, "");
}

/**
 * A reviewer's scripted model, read from the conversation so any process can play it: first it asks
 * for its sign-off (the tool waits for the owner), then it approves when the tool ran, else rejects.
 */
export const reviewerTurn: ScriptedTurn = (request) => {
  const answer = request.messages.findLast((m) => m.role === "tool");
  if (answer === undefined) {
    const release = request.messages.findLast((m) => m.role === "user")?.content ?? "";
    return callTool(SignOffTool, { reviewer: reviewerOf(request), release: release.trim() });
  }
  return replyWith(answer.content.startsWith("Tool error:") ? "reject" : "approve");
};

/** The release agent's scripted model: it reads the quorum join and says what was decided. */
export const releaseTurn: ScriptedTurn = (request) => {
  const joined = JSON.parse(
    request.messages.findLast((m) => m.role === "user")?.content ?? "{}",
  ) as QuorumJoinOutput;
  const by = (verdict: string) =>
    joined.results.filter((r) => r.verdict === verdict).map((r) => r.branch.replace(/-reviewer-agent$/, ""));
  const approved = by("counted");
  const surplus = by("surplus");
  return replyWith(
    `Release ${joined.outcome === "won" ? "approved" : "held"}: ${approved.join(" and ") || "nobody"} signed off` +
      (surplus.length > 0 ? `; ${surplus.join(", ")} no longer needed.` : "."),
  );
};
