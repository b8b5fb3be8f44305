import type { ChatRequest } from "@agboss/core";

/**
 * Which model requests a `mockLlm(…).when(match)` case answers: a predicate on the request, or the
 * sections of the last user message a reply interpreter's model reads (`### ask`, `### reply`). A
 * string matches a section equal to it (surrounding whitespace ignored); a RegExp tests it.
 *
 * @example
 * mockLlm(RefundReplyInterpreter).when({ reply: /half/ }).thenReturn(replyWith(ToolCallApprovalDecisionDto, { approved: true }))
 */
export type TurnMatch =
  | { readonly reply?: string | RegExp; readonly ask?: string | RegExp }
  | ((request: ChatRequest) => boolean);

/** The text of the `### <heading>` section of the request's last user message. @internal */
export function sectionOf(request: ChatRequest, heading: string): string | undefined {
  const user = [...request.messages].reverse().find((m) => m.role === "user");
  if (user === undefined) return undefined;
  const lines = user.content.split("\n");
  const start = lines.findIndex((line) => line.trim() === `### ${heading}`);
  if (start === -1) return undefined;
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => line.startsWith("### "));
  return (end === -1 ? rest : rest.slice(0, end)).join("\n").trim();
}

/** True when the request matches. @internal */
export function turnMatches(match: TurnMatch, request: ChatRequest): boolean {
  if (typeof match === "function") return match(request);
  const fits = (expected: string | RegExp | undefined, heading: string) => {
    if (expected === undefined) return true;
    const actual = sectionOf(request, heading);
    if (actual === undefined) return false;
    return typeof expected === "string" ? actual === expected.trim() : expected.test(actual);
  };
  return fits(match.reply, "reply") && fits(match.ask, "ask");
}
