import { type PauseAnswerValue, validatePauseAnswer } from "../answering/answer-validation.js";
import type { AssembledTool } from "../assembly/assembled-application.js";
import { BudgetExceededError } from "../budgets/budget-exceeded-error.js";
import { ToolCallApprovalDecisionDto as DecisionDto } from "../channels/approval-dtos.js";
import type { ChannelAskValue } from "../channels/channel-ask.js";
import { componentOf } from "../container/component-registry.js";
import { ExecutionContext, type ExecutionFrame } from "../container/execution-context.js";
import { type DtoClass, dtoJsonSchema } from "../dto/dto.js";
import { isStoreFault } from "../errors/app-errors.js";
import { AppClosedError } from "../errors/runtime-errors.js";
import type { ReplyInterpreterHandler } from "../interpreters/component-types.js";
import { ReplyInterpretation } from "../interpreters/reply-interpretation.js";
import { DecidedBy, type ReplyInterpreterOptions } from "../interpreters/reply-interpreter.js";
import type { ModelUsage } from "../models/chat-model.js";
import { ANSWER_TOOL_NAME } from "../models/chat-model.js";
import { Decision } from "../models/decision-model.js";
import { UninterpretableReplyError } from "../pauses/pause-errors.js";
import type { PauseRecord } from "../pauses/pause-record.js";
import { PiiRefusedError } from "../pii/pii-refused-error.js";
import { callChatModel, callDecisionModel } from "../services/model-call.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { frameOfPause } from "./pause-book.js";

/** A reply read as a decision (or a question role's answer), with what reading it cost. @internal */
export interface Interpreted {
  readonly value: PauseAnswerValue;
  readonly cost:
    | {
        readonly interpreter: string;
        readonly model?: string;
        readonly usage?: ModelUsage;
        readonly probabilityYes?: number;
      }
    | undefined;
}

/** Errors that are not about the reply: they leave the pause untouched and reach the caller as they are. */
function passesThrough(error: unknown): boolean {
  return (
    error instanceof BudgetExceededError ||
    error instanceof PiiRefusedError ||
    // Nothing about the reply: the caller is to try again (an HTTP surface answers 503).
    isStoreFault(error) ||
    error instanceof AppClosedError
  );
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What a decision model is asked before the interpreter's own prompt. @internal */
export const DECISION_QUESTION =
  "A person answered the question below in their own words. Does their reply approve the request? Answer yes or no.";

/** The input message a model interpreter reads: the question and the reply, under their headings. @internal */
export function interpreterMessage(ask: ChannelAskValue<unknown>, reply: string): string {
  return `### ask\n${JSON.stringify(ask, null, 2)}\n\n### reply\n${reply}`;
}

/** An interpreter's options, its `prompt` the whole instructions (with its `promptUrls` read at start). */
function withLoadedPrompt(
  services: RuntimeServices,
  interpreter: ReplyToRead["interpreter"],
): ReplyInterpreterOptions {
  const options = componentOf<ReplyInterpreterOptions>(interpreter)?.options as ReplyInterpreterOptions;
  const loaded = services.interpreterPrompts?.get(interpreter);
  return loaded === undefined ? options : { ...options, prompt: loaded };
}

/** The reply {@link interpretReply} reads, and the pause it answers. @internal */
export interface ReplyToRead {
  pause: PauseRecord;
  tool: AssembledTool;
  interpreter: NonNullable<NonNullable<AssembledTool["channel"]>["replyInterpreter"]>;
  reply: string;
}

/** One reply's reading, as the readers below share it. */
interface Reading extends ReplyToRead {
  readonly services: RuntimeServices;
  /** The interpreter's decorator options. */
  readonly options: ReplyInterpreterOptions;
  /** The question the pause asked. */
  readonly ask: ChannelAskValue<unknown>;
  /** The pause's execution frame, which the interpreter runs in. */
  readonly frame: ExecutionFrame;
  /** A question role's answer DTO; undefined when the reply is read as a decision. */
  readonly answerDto: DtoClass | undefined;
}

/**
 * Reads a free-text reply with the role's interpreter, in the pause's execution frame, and validates
 * what it yields like any decision. Anything short of a valid decision is an
 * {@link UninterpretableReplyError}; nothing is written, so the pause keeps waiting.
 * @internal
 */
export async function interpretReply(services: RuntimeServices, args: ReplyToRead): Promise<Interpreted> {
  const { pause, tool, interpreter } = args;
  const reading: Reading = {
    ...args,
    services,
    options: withLoadedPrompt(services, interpreter),
    ask: pause.ask,
    frame: frameOfPause(pause, new AbortController().signal),
    answerDto: tool.channel?.answer,
  };
  if (reading.options.decidedBy === DecidedBy.Code) return readByCode(reading);
  if (services.models.isDecisionModel(reading.options.model as string)) return readByDecisionModel(reading);
  return readByChatModel(reading);
}

/** The error that says the reply could not be read (the pause keeps waiting). */
function unreadable(reading: Reading, reason: string, cause?: unknown): UninterpretableReplyError {
  return new UninterpretableReplyError(reading.pause.pauseId, reason, cause === undefined ? {} : { cause });
}

/** What the interpreter yielded, validated as the tool's decision or answer; else the reply is unreadable. */
function checked(reading: Reading, value: unknown): PauseAnswerValue {
  try {
    return validatePauseAnswer(reading.tool, value);
  } catch (error) {
    throw unreadable(
      reading,
      `the interpreter's answer is not a valid ${reading.answerDto === undefined ? "decision" : reading.answerDto.name}: ${reasonOf(error)}`,
      error,
    );
  }
}

/** Reads the reply with the interpreter's own `interpret` method; reading by code costs nothing. */
async function readByCode(reading: Reading): Promise<Interpreted> {
  const { services, interpreter, options, frame, ask, reply } = reading;
  let outcome: unknown;
  try {
    const handler = services.container.get(interpreter) as ReplyInterpreterHandler<unknown>;
    outcome = await ExecutionContext.run(frame, () => handler.interpret({ ask, reply }));
  } catch (error) {
    throw unreadable(reading, reasonOf(error), error);
  }
  if (!ReplyInterpretation.is(outcome)) {
    throw unreadable(
      reading,
      `${options.name} returned something other than ReplyInterpretation.understood(…) or .notUnderstood(…).`,
    );
  }
  if (outcome.kind === "not-understood")
    throw unreadable(reading, outcome.reason ?? "the reply was not understood.");
  return { value: checked(reading, outcome.decision), cost: undefined };
}

/** Who calls the interpreter's model, on whose behalf, and which values in its input are sensitive. */
function modelCallOf(reading: Reading) {
  const { pause, tool, options, frame, ask } = reading;
  return {
    caller: `reply-interpreter:${options.name}`,
    scope: {
      tenantId: pause.tenantId,
      rootExecutionId: pause.rootExecutionId,
      executionId: pause.executionId,
      workflow: frame.workflow.name,
    },
    sensitive: [{ schema: tool.options.input.schema, value: ask.arguments }],
  };
}

/**
 * A model call's failure: a budget or PII refusal, the store out of reach or the app closing reach the
 * caller as they are; any other makes the reply unreadable.
 */
function modelFailure(reading: Reading, error: unknown): unknown {
  if (passesThrough(error)) return error;
  return unreadable(reading, `the interpreter's model failed: ${reasonOf(error)}`, error);
}

/** Reads the reply with a decision model: one yes / no about whether it approves, as its probability. */
async function readByDecisionModel(reading: Reading): Promise<Interpreted> {
  const { services, interpreter, options, frame, ask, reply, answerDto } = reading;
  const { caller, scope, sensitive } = modelCallOf(reading);
  if (answerDto !== undefined) {
    // Assembly refuses this pairing ([reply-interpreter.decision-model]); kept for applications assembled otherwise.
    throw unreadable(
      reading,
      `${options.name} reads a question role's replies with a decision model, which cannot give a ${answerDto.name}.`,
    );
  }
  // A decision model reads approve / refuse only: one yes / no about `approved`, nothing else.
  let decided: Awaited<ReturnType<typeof callDecisionModel>>;
  try {
    decided = await ExecutionContext.run(frame, () =>
      callDecisionModel(services, {
        component: interpreter,
        modelId: options.model as string,
        scope,
        sensitive,
        request: {
          model: options.model as string,
          question: Decision.noul("approved"),
          instructions: `${DECISION_QUESTION}${options.prompt === undefined ? "" : `\n\n${options.prompt}`}`,
          input: interpreterMessage(ask, reply),
          caller,
          signal: frame.signal,
        },
      }),
    );
  } catch (error) {
    throw modelFailure(reading, error);
  }
  const p = decided.probabilityYes;
  if (typeof p !== "number" || Number.isNaN(p) || p < 0 || p > 1) {
    throw unreadable(reading, `the interpreter's decision model gave no probability (got ${String(p)}).`);
  }
  return {
    value: checked(reading, { approved: p > 0.5 }),
    cost: {
      interpreter: options.name,
      model: options.model as string,
      probabilityYes: p,
      ...(decided.usage === undefined ? {} : { usage: decided.usage }),
    },
  };
}

/** Reads the reply with a chat model, which must call the answer tool exactly once with the decision or answer. */
async function readByChatModel(reading: Reading): Promise<Interpreted> {
  const { services, interpreter, options, frame, ask, reply, answerDto } = reading;
  const { caller, scope, sensitive } = modelCallOf(reading);
  let response: Awaited<ReturnType<Awaited<ReturnType<RuntimeServices["models"]["resolve"]>>["invoke"]>>;
  try {
    response = await ExecutionContext.run(frame, () =>
      callChatModel(services, {
        component: interpreter,
        modelId: options.model as string,
        scope,
        sensitive,
        request: {
          model: options.model as string,
          messages: [
            {
              role: "system",
              content:
                options.prompt ??
                (answerDto === undefined
                  ? "Read the reply to the question and give the decision it expresses."
                  : "Read the reply to the question and give the answer it expresses."),
            },
            { role: "user", content: interpreterMessage(ask, reply) },
          ],
          tools: [
            {
              name: ANSWER_TOOL_NAME,
              description: `Give the ${answerDto === undefined ? "decision" : "answer"} the reply expresses. Call it exactly once.`,
              parameters: dtoJsonSchema(answerDto ?? DecisionDto),
            },
          ],
          toolChoice: "required",
          caller,
          signal: frame.signal,
        },
      }),
    );
  } catch (error) {
    throw modelFailure(reading, error);
  }
  const answers = response.toolCalls.filter((c) => c.name === ANSWER_TOOL_NAME);
  if (answers.length !== 1) {
    throw unreadable(
      reading,
      answers.length === 0
        ? "the interpreter's model gave no answer."
        : "the interpreter's model answered more than once.",
    );
  }
  return {
    value: checked(reading, answers[0]?.arguments),
    cost: {
      interpreter: options.name,
      model: options.model as string,
      ...(response.usage === undefined ? {} : { usage: response.usage }),
    },
  };
}
