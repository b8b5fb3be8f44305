import {
  type App,
  type DtoClass,
  DtoValidationError,
  PauseKind,
  type ResumeRequest,
  type ToolCallApprovalDecisionDto,
  UninterpretableReplyError,
} from "@agboss/core";
import { input as inputPrompt, Separator, select } from "@inquirer/prompts";
import { answerFields, askAnswer } from "./answer-form.js";
import type { AnswerInTerminalOptions } from "./answer-in-terminal-options.js";
import { answeredChannels } from "./answered-channel.js";
import { describeArguments, describeQuestion, describeResult, describeResumeError } from "./describe.js";
import type { OpenQuestion } from "./open-question.js";
import { openQuestions } from "./open-questions.js";
import { promptOutput } from "./prompt-output.js";
import { showProgress } from "./show-progress.js";
import type { TerminalAnswer } from "./terminal-answer.js";
import { type TerminalSession, TerminalSessionEnd } from "./terminal-session.js";

const QUIT = Symbol("quit");
const PROMPT_CLOSED = new Set(["ExitPromptError", "AbortPromptError", "CancelPromptError"]);

/** Ctrl-C, a closed input or an abort: the prompt library's way of saying nobody will answer. */
function isPromptClosed(error: unknown): boolean {
  return error instanceof Error && PROMPT_CLOSED.has(error.name);
}

/** What a resume was given, and what it returned. */
type Given = Omit<TerminalAnswer, "question">;

/** The start of the line that reports an answer. */
function summaryOf(given: Given): string {
  if (given.decision !== undefined) return given.decision.approved ? "✔ approved" : "✖ rejected";
  return given.answer !== undefined ? "✔ answered" : "✔ replied to";
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * Answers the questions {@link TerminalUserChannel} (and the channel roles in `roles`) asked the
 * thread's owner, at the terminal. It lists every open question (tool, masked arguments, thread), lets
 * the person pick one and answer it, shows what the execution did, and asks again while questions
 * remain, in any order:
 *
 * - an approval is approved or rejected (with an optional reason):
 *   `app.resume({ pauseId, decision }, { tenantId, ownerId })`;
 * - a question is answered field by field with a value of its role's answer DTO (a list for an enum,
 *   yes/no for a boolean, a number, a line of text; optional fields can be left out), each field
 *   checked as it is typed: `app.resume({ pauseId, answer }, …)`. When the DTO refuses the whole
 *   answer, its issues are shown and the fields they name asked again, the rest kept;
 * - when the role has a reply interpreter, either can be answered in words instead
 *   (`app.resume({ pauseId, reply }, …)`); words it cannot read are shown with its reason and asked again.
 *
 * The questions are read from the store, so it works in a process other than the one that asked.
 * Ctrl-C or a closed input ends the session quietly (the questions keep waiting); a resume that fails
 * (already answered elsewhere, a failing step) is shown as a sentence and the list is read again.
 *
 * @example
 * const session = await answerInTerminal(app, { ownerId: "dana", tenantId: "acme", roles: [PickupSlotChannel], record: true });
 * console.log(session.answers.at(-1)?.result.record?.pauses);
 */
export async function answerInTerminal(app: App, options: AnswerInTerminalOptions): Promise<TerminalSession> {
  const { ownerId, roles } = options;
  answeredChannels(roles); // refuses a role the owner cannot answer before anything is shown
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

  const credential = { tenantId, ownerId, ...(options.record === true ? { record: true } : {}) };
  /** Answers a pause, showing what the execution does meanwhile unless asked not to. */
  const resume = (request: ResumeRequest) =>
    options.progress === false
      ? app.resume(request, credential)
      : showProgress(app.streamResume(request, credential), { output });
  const ofCall = (question: OpenQuestion) => `${question.tool} (${describeArguments(question.arguments)})`;

  /** Words for the role's reply interpreter, asked again while it cannot read them; undefined: back. */
  const replyTo = async (question: OpenQuestion): Promise<Given | undefined> => {
    for (;;) {
      const reply = (
        await inputPrompt({ message: "Your reply, in words (Enter on an empty line to go back)" }, context())
      ).trim();
      if (reply === "") return undefined;
      try {
        const result = await resume({ pauseId: question.pauseId, reply });
        return { decision: undefined, answer: undefined, reply, result };
      } catch (error) {
        if (!(error instanceof UninterpretableReplyError)) throw error;
        say(`! not understood: ${error.reason}`);
      }
    }
  };

  /** An approval: approve, reject (with an optional reason), reply in words if the role reads replies. */
  const decide = async (question: OpenQuestion): Promise<Given | undefined> => {
    for (;;) {
      const verdict = await select<string>(
        {
          message: `${ofCall(question)}: your answer?`,
          choices: [
            { value: "approve", name: "Approve" },
            { value: "reject", name: "Reject" },
            ...(question.readsReplies ? [{ value: "reply", name: "Reply in words" }] : []),
            { value: "back", name: "Back to the list" },
          ],
        },
        context(),
      );
      if (verdict === "back") return undefined;
      if (verdict === "reply") {
        const replied = await replyTo(question);
        if (replied === undefined) continue;
        return replied;
      }
      let decision: ToolCallApprovalDecisionDto = { approved: true };
      if (verdict === "reject") {
        const reason = (await inputPrompt({ message: "Why? (optional, Enter to skip)" }, context())).trim();
        decision = reason === "" ? { approved: false } : { approved: false, reason };
      }
      const result = await resume({ pauseId: question.pauseId, decision });
      return { decision, answer: undefined, reply: undefined, result };
    }
  };

  /**
   * A question's answer, field by field. When the answer DTO refuses the whole (a rule across fields),
   * its issues are shown and the fields they name are asked again, the rest kept.
   */
  const fillIn = async (question: OpenQuestion, dto: DtoClass): Promise<Given> => {
    const fields = answerFields(dto);
    say(`${dto.name} for ${question.tool}: ${question.channelDescription || question.channel}`);
    let asking = fields;
    let answer: Record<string, unknown> = {};
    for (;;) {
      answer = await askAnswer(asking, answer, context);
      try {
        const result = await resume({ pauseId: question.pauseId, answer });
        return { decision: undefined, answer, reply: undefined, result };
      } catch (error) {
        if (!(error instanceof DtoValidationError)) throw error;
        say(`! ${error.dto} refused that answer:`);
        for (const issue of error.issues)
          say(`  - ${issue.path === "" ? "(the answer)" : issue.path}: ${issue.message}`);
        const named = fields.filter((f) =>
          error.issues.some((i) => i.path === f.key || i.path.startsWith(`${f.key}.`)),
        );
        const allNamed = error.issues.every((i) =>
          named.some((f) => i.path === f.key || i.path.startsWith(`${f.key}.`)),
        );
        asking = named.length > 0 && allNamed ? named : fields;
        say(
          asking === fields
            ? "Answer again; what you gave is offered first."
            : "Answer those again; the rest is kept.",
        );
      }
    }
  };

  /** A question: fill in the answer DTO, reply in words if the role reads replies, or go back. */
  const answerQuestion = async (question: OpenQuestion, dto: DtoClass): Promise<Given | undefined> => {
    for (;;) {
      const how = await select<string>(
        {
          message: `${ofCall(question)}: your answer?`,
          choices: [
            { value: "fill", name: "Fill in the answer", description: `field by field: ${dto.name}` },
            ...(question.readsReplies ? [{ value: "reply", name: "Reply in words" }] : []),
            { value: "back", name: "Back to the list" },
          ],
        },
        context(),
      );
      if (how === "back") return undefined;
      if (how === "fill") return fillIn(question, dto);
      const replied = await replyTo(question);
      if (replied !== undefined) return replied;
    }
  };

  try {
    for (;;) {
      const open = await openQuestions(app, { ownerId, tenantId, roles });
      if (open.length === 0) {
        say(answers.length === 0 ? `No open questions for ${ownerId}.` : `No questions left for ${ownerId}.`);
        return { answers, end: TerminalSessionEnd.NoneOpen };
      }
      const question = await choose(open);
      if (question === QUIT) {
        say(`${plural(open.length, "question")} left open; they wait until someone answers them.`);
        return { answers, end: TerminalSessionEnd.Quit };
      }
      try {
        const given =
          question.kind === PauseKind.Question && question.answer !== undefined
            ? await answerQuestion(question, question.answer)
            : await decide(question);
        if (given === undefined) continue;
        answers.push({ question, ...given });
        say(`${summaryOf(given)} ${question.tool}: ${describeResult(given.result)}`);
      } catch (error) {
        if (isPromptClosed(error)) throw error;
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
