import {
  type ChatModel,
  type ChatRequest,
  callTool,
  ModelProvider,
  type ModelProviderHandler,
  replyWith,
  ScriptedChatModel,
  type ScriptedTurn,
  ToolCallApprovalDecisionDto,
} from "@agboss/core";
import { type OpenAiCompatibleProviderClass, openAiCompatibleProvider } from "@agboss/provider-openai";
import { DamageRefundTool } from "./damage-assessment.js";
import { GoodwillCreditTool } from "./goodwill-approval.js";
import { AGENT_MODEL, REPLY_MODEL } from "./model-ids.js";
import { RefundCardTool } from "./refund-approval.js";

/** What came of the tool call, in a sentence for the customer; undefined before the call. */
function outcomeOf(request: ChatRequest): string | undefined {
  const message = request.messages.findLast((m) => m.role === "tool");
  if (message === undefined) return undefined;
  if (message.content.startsWith("Tool error:")) {
    return `I could not do it: ${message.content.slice("Tool error:".length).trim()}.`;
  }
  return `Done: ${(JSON.parse(message.content) as { status: string }).status}.`;
}

/** The request the agent was given: the start's input, as JSON in the first user message. */
function requestOf(request: ChatRequest): { orderId: string; amountCents: number; text: string } {
  const content = request.messages.find((m) => m.role === "user")?.content ?? "{}";
  const parsed = JSON.parse(content) as Partial<{ orderId: string; amountCents: number; text: string }>;
  return {
    orderId: parsed.orderId ?? "unknown",
    amountCents: parsed.amountCents ?? 0,
    text: parsed.text ?? "",
  };
}

/**
 * The desk agent's scripted moves, read from the conversation so that any process can play them: the
 * first turn calls one tool with the order and amount from the request (a credit when the customer
 * asks for one, a damage claim when the item arrived damaged), the second reports what came of it.
 */
export const deskAgentTurn: ScriptedTurn = (request) => {
  const outcome = outcomeOf(request);
  if (outcome !== undefined) return replyWith(outcome);
  const { orderId, amountCents, text } = requestOf(request);
  const wantsCredit = /goodwill|store credit|voucher|credit note/i.test(text);
  const damaged = /\bdamaged?\b/i.test(text);
  const tool = wantsCredit ? GoodwillCreditTool : damaged ? DamageRefundTool : RefundCardTool;
  return callTool(tool, { orderId, amountCents });
};

const REFUSING = /\b(no|not|don't|do not|refuse|reject|decline|never)\b/i;
const AGREEING = /\b(yes|ok|okay|sure|fine|go ahead|approve|approved|agreed|do it)\b/i;

/**
 * The goodwill interpreter's scripted model: it reads the `### reply` section and answers through the
 * answer tool, as a real model would; when the words say neither yes nor no it answers in prose,
 * which gives no decision (the webhook then asks for a clearer reply).
 */
export const replyReaderTurn: ScriptedTurn = (request) => {
  const input = request.messages.find((m) => m.role === "user")?.content ?? "";
  const reply = input.split("### reply\n").at(-1)?.trim() ?? "";
  if (REFUSING.test(reply)) {
    return replyWith(ToolCallApprovalDecisionDto, {
      approved: false,
      reason: `the manager wrote "${reply}"`,
    });
  }
  if (AGREEING.test(reply)) return replyWith(ToolCallApprovalDecisionDto, { approved: true });
  return replyWith("I cannot tell whether the manager agrees.");
};

/** Serves the desk's model ids with scripted turns: the example runs with no network and no key. */
@ModelProvider({
  name: "scripted-refund-desk-model-provider",
  description: "Plays the desk agent and the goodwill reply reader from scripts",
  serves: [...new Set([AGENT_MODEL, REPLY_MODEL])],
})
export class ScriptedRefundDeskModelProvider implements ModelProviderHandler {
  readonly #agent = new ScriptedChatModel([deskAgentTurn], { loop: true });
  readonly #replyReader = new ScriptedChatModel([replyReaderTurn], { loop: true });

  chatModel(): ChatModel {
    // One id may serve both callers, so the caller picks the script.
    return {
      invoke: (request) =>
        request.caller.startsWith("reply-interpreter:")
          ? this.#replyReader.invoke(request)
          : this.#agent.invoke(request),
    };
  }
}

/** The variables that switch the desk to a real OpenAI-compatible endpoint. */
export const OPENAI_KEY_VARIABLES = ["AGBOSS_OPENAI_API_KEY", "OPENAI_API_KEY"] as const;

/** Which models the desk talks to, chosen once at startup. */
export interface ModelChoice {
  readonly kind: "scripted" | "openai-compatible";
  readonly provider: typeof ScriptedRefundDeskModelProvider | OpenAiCompatibleProviderClass;
}

/**
 * Scripted models unless an OpenAI key is set; with one, `@agboss/provider-openai` serves the desk's
 * model ids from `AGBOSS_OPENAI_BASE_URL` (default the OpenAI API).
 */
export function modelProvidersFor(env: Readonly<Record<string, string | undefined>>): ModelChoice {
  const hasKey = OPENAI_KEY_VARIABLES.some((name) => (env[name] ?? "") !== "");
  if (!hasKey) return { kind: "scripted", provider: ScriptedRefundDeskModelProvider };
  return {
    kind: "openai-compatible",
    provider: openAiCompatibleProvider({
      name: "openai-refund-desk-model-provider",
      description: "The desk's models from an OpenAI-compatible endpoint",
      serves: [...new Set([AGENT_MODEL, REPLY_MODEL])],
      apiKeyVariables: OPENAI_KEY_VARIABLES,
      env,
      chatOpenAI: { timeout: 30_000, maxRetries: 2 },
    }),
  };
}
