import { type PauseAnswerValue, validatePauseAnswer } from "../answering/answer-validation.js";
import type { AssembledTool } from "../assembly/assembled-application.js";
import { BudgetExceededError } from "../budgets/budget-exceeded-error.js";
import { ToolCallApprovalDecisionDto as DecisionDto } from "../channels/approval-dtos.js";
import type { ChannelAskValue } from "../channels/channel-ask.js";
import { componentOf } from "../container/component-registry.js";
import { ExecutionContext } from "../container/execution-context.js";
import { dtoJsonSchema } from "../dto/dto.js";
import type { ReplyInterpreterHandler } from "../interpreters/component-types.js";
import { ReplyInterpretation } from "../interpreters/reply-interpretation.js";
import { DecidedBy, type ReplyInterpreterOptions } from "../interpreters/reply-interpreter.js";
import type { ModelUsage } from "../models/chat-model.js";
import { Decision } from "../models/decision-model.js";
import { ANSWER_TOOL_NAME } from "../models/scripted-chat-model.js";
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
  return error instanceof BudgetExceededError || error instanceof PiiRefusedError;
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

/**
 * Reads a free-text reply with the role's interpreter, in the pause's execution frame, and validates
 * what it yields like any decision. Anything short of a valid decision is an
 * {@link UninterpretableReplyError}; nothing is written, so the pause keeps waiting.
 * @internal
 */
export async function interpretReply(
  services: RuntimeServices,
  args: {
    pause: PauseRecord;
    tool: AssembledTool;
    interpreter: NonNullable<NonNullable<AssembledTool["channel"]>["replyInterpreter"]>;
    reply: string;
  },
): Promise<Interpreted> {
  const { pause, tool, interpreter, reply } = args;
  const options = componentOf<ReplyInterpreterOptions>(interpreter)?.options as ReplyInterpreterOptions;
  const ask = pause.ask as ChannelAskValue<unknown>;
  const frame = frameOfPause(pause, new AbortController().signal);
  const unreadable = (reason: string, cause?: unknown) =>
    new UninterpretableReplyError(pause.pauseId, reason, cause === undefined ? {} : { cause });
  const answerDto = tool.channel?.answer;
  const checked = (value: unknown): PauseAnswerValue => {
    try {
      return validatePauseAnswer(tool, value);
    } catch (error) {
      throw unreadable(
        `the interpreter's answer is not a valid ${answerDto === undefined ? "decision" : answerDto.name}: ${reasonOf(error)}`,
        error,
      );
    }
  };
  if (options.decidedBy === DecidedBy.Code) {
    let outcome: unknown;
    try {
      const handler = services.container.get(interpreter) as ReplyInterpreterHandler<unknown>;
      outcome = await ExecutionContext.run(frame, () => handler.interpret({ ask, reply }));
    } catch (error) {
      throw unreadable(reasonOf(error), error);
    }
    if (!ReplyInterpretation.is(outcome)) {
      throw unreadable(
        `${options.name} returned something other than ReplyInterpretation.understood(…) or .notUnderstood(…).`,
      );
    }
    if (outcome.kind === "not-understood")
      throw unreadable(outcome.reason ?? "the reply was not understood.");
    return { value: checked(outcome.decision), cost: undefined };
  }
  const caller = `reply-interpreter:${options.name}`;
  const scope = {
    tenantId: pause.tenantId,
    rootExecutionId: pause.rootExecutionId,
    executionId: pause.executionId,
    workflow: frame.workflow.name,
  };
  const sensitive = [{ schema: tool.options.input.schema, value: ask.arguments }];
  if (services.models.isDecisionModel(options.model as string)) {
    if (answerDto !== undefined) {
      // Assembly refuses this pairing ([reply-interpreter.decision-model]); kept for applications assembled otherwise.
      throw unreadable(
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
      if (passesThrough(error)) throw error;
      throw unreadable(`the interpreter's model failed: ${reasonOf(error)}`, error);
    }
    const p = decided.probabilityYes;
    if (typeof p !== "number" || Number.isNaN(p) || p < 0 || p > 1) {
      throw unreadable(`the interpreter's decision model gave no probability (got ${String(p)}).`);
    }
    return {
      value: checked({ approved: p > 0.5 }),
      cost: {
        interpreter: options.name,
        model: options.model as string,
        probabilityYes: p,
        ...(decided.usage === undefined ? {} : { usage: decided.usage }),
      },
    };
  }
  let response: Awaited<ReturnType<Awaited<ReturnType<RuntimeServices["models"]["resolve"]>>["invoke"]>>;
  try {
    response = await ExecutionContext.run(frame, () =>
      callChatModel(services, {
        component: interpreter,
        modelId: options.model as string,
        scope: {
          tenantId: pause.tenantId,
          rootExecutionId: pause.rootExecutionId,
          executionId: pause.executionId,
          workflow: frame.workflow.name,
        },
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
    if (passesThrough(error)) throw error;
    throw unreadable(`the interpreter's model failed: ${reasonOf(error)}`, error);
  }
  const answers = response.toolCalls.filter((c) => c.name === ANSWER_TOOL_NAME);
  if (answers.length !== 1) {
    throw unreadable(
      answers.length === 0
        ? "the interpreter's model gave no answer."
        : "the interpreter's model answered more than once.",
    );
  }
  return {
    value: checked(answers[0]?.arguments),
    cost: {
      interpreter: options.name,
      model: options.model as string,
      ...(response.usage === undefined ? {} : { usage: response.usage }),
    },
  };
}
