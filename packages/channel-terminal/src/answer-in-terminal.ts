import type { App, ToolCallApprovalDecisionDto } from "@agboss/core";
import { input as inputPrompt, Separator, select } from "@inquirer/prompts";
import type { AnswerInTerminalOptions } from "./answer-in-terminal-options.js";
import { describeArguments, describeQuestion, describeResult, describeResumeError } from "./describe.js";
import type { OpenQuestion } from "./open-question.js";
import { openQuestions } from "./open-questions.js";
import { promptOutput } from "./prompt-output.js";
import type { TerminalAnswer } from "./terminal-answer.js";
import { type TerminalSession, TerminalSessionEnd } from "./terminal-session.js";

const QUIT = Symbol("quit");
const PROMPT_CLOSED = new Set(["ExitPromptError", "AbortPromptError", "CancelPromptError"]);

/** Ctrl-C, a closed input or an abort: the prompt library's way of saying nobody will answer. */
function isPromptClosed(error: unknown): boolean {
  return error instanceof Error && PROMPT_CLOSED.has(error.name);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * Answers the questions {@link TerminalUserChannel} asked the thread's owner, at the terminal. It lists
 * every open question (tool, masked arguments, thread), lets the person pick one, approve or reject it
 * (with an optional reason), answers it with `app.resume({ pauseId, decision }, { tenantId, ownerId })`,
 * shows what the execution did, and asks again while questions remain, in any order.
 *
 * The questions are read from the store, so it works in a process other than the one that asked.
 * Ctrl-C or a closed input ends the session quietly (the questions keep waiting); a resume that fails
 * (already answered elsewhere, a failing step) is shown as a sentence and the list is read again.
 *
 * @example
 * const session = await answerInTerminal(app, { ownerId: "dana", tenantId: "acme", record: true });
 * console.log(session.answers.at(-1)?.result.record?.pauses);
 */
export async function answerInTerminal(app: App, options: AnswerInTerminalOptions): Promise<TerminalSession> {
  const { ownerId } = options;
  const tenantId = options.tenantId ?? "default";
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const say = (line: string) => output.write(`${line}\n`);
  const stop = new AbortController();
  const closed = () => stop.abort(new Error("the input closed"));
  const aborted = () => stop.abort(options.signal?.reason);
  input.on("end", closed);
  input.on("close", closed);
  if (options.signal?.aborted === true) aborted();
  options.signal?.addEventListener("abort", aborted);
  const context = () => ({ input, output: promptOutput(output), signal: stop.signal });
  const answers: TerminalAnswer[] = [];

  const choose = async (open: readonly OpenQuestion[]): Promise<OpenQuestion | typeof QUIT> => {
    const picked = await select<string | typeof QUIT>(
      {
        message: `${plural(open.length, "open question")} for ${ownerId}: which one do you answer?`,
        choices: [
          ...open.map((q) => ({
            value: q.pauseId,
            name: describeQuestion(q),
            short: q.tool,
            description: `asked by ${q.agent} at ${q.askedAt} in execution ${q.executionId}`,
          })),
          new Separator(),
          { value: QUIT, name: "Answer the rest later", short: "later" },
        ],
        pageSize: Math.min(open.length + 2, 12),
        loop: false,
      },
      context(),
    );
    return picked === QUIT ? QUIT : (open.find((q) => q.pauseId === picked) ?? QUIT);
  };

  const decide = async (question: OpenQuestion): Promise<ToolCallApprovalDecisionDto | undefined> => {
    const verdict = await select(
      {
        message: `${question.tool} (${describeArguments(question.arguments)}): your answer?`,
        choices: [
          { value: "approve", name: "Approve" },
          { value: "reject", name: "Reject" },
          { value: "back", name: "Back to the list" },
        ] as const,
      },
      context(),
    );
    if (verdict === "back") return undefined;
    if (verdict === "approve") return { approved: true };
    const reason = (await inputPrompt({ message: "Why? (optional, Enter to skip)" }, context())).trim();
    return reason === "" ? { approved: false } : { approved: false, reason };
  };

  try {
    for (;;) {
      const open = await openQuestions(app, { ownerId, tenantId });
      if (open.length === 0) {
        say(answers.length === 0 ? `No open questions for ${ownerId}.` : `No questions left for ${ownerId}.`);
        return { answers, end: TerminalSessionEnd.NoneOpen };
      }
      const question = await choose(open);
      if (question === QUIT) {
        say(`${plural(open.length, "question")} left open; they wait until someone answers them.`);
        return { answers, end: TerminalSessionEnd.Quit };
      }
      const decision = await decide(question);
      if (decision === undefined) continue;
      try {
        const result = await app.resume(
          { pauseId: question.pauseId, decision },
          { tenantId, ownerId, ...(options.record === true ? { record: true } : {}) },
        );
        answers.push({ question, decision, result });
        say(`${decision.approved ? "✔ approved" : "✖ rejected"} ${question.tool}: ${describeResult(result)}`);
      } catch (error) {
        say(`! could not answer ${question.tool}: ${describeResumeError(error)}`);
      }
    }
  } catch (error) {
    if (!isPromptClosed(error)) throw error;
    say("\nStopped. The open questions keep waiting; answer them later.");
    return { answers, end: TerminalSessionEnd.Interrupted };
  } finally {
    input.removeListener("end", closed);
    input.removeListener("close", closed);
    options.signal?.removeEventListener("abort", aborted);
  }
}
