/** The name of the tool through which a model gives a structured answer (an agent's output DTO). */
export const ANSWER_TOOL_NAME = "submit_answer";

/** A tool call the model asked for. */
export interface ChatToolCall {
  /** The model's id for the call; tool results answer it. */
  readonly id: string;
  readonly name: string;
  /** The arguments as the model gave them (not yet validated). */
  readonly arguments: unknown;
}

/** One message of a conversation with a model. */
export type ChatMessage =
  | { readonly role: "system"; readonly content: string }
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls?: readonly ChatToolCall[] }
  | { readonly role: "tool"; readonly content: string; readonly toolCallId: string; readonly name: string };

/** A tool the model may call. */
export interface ChatToolSpec {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments. */
  readonly parameters: Record<string, unknown>;
}

/** Tokens a model call used. */
export interface ModelUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** What the runtime asks a model. */
export interface ChatRequest {
  /** The model id the caller named. */
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ChatToolSpec[];
  /** `required`: the model must call a tool (an answer tool, say). */
  readonly toolChoice?: "auto" | "required";
  /** Who asks, e.g. `agent:refund-agent`; scripted models and traces use it. */
  readonly caller: string;
  readonly signal?: AbortSignal;
  /**
   * Set when someone follows the run as it happens (`app.stream`): a model that can stream calls it
   * with each piece of its answer's text as it arrives, and still returns the whole response. A model
   * that cannot may ignore it; the turn's text is streamed whole when the turn ends.
   */
  readonly onText?: ((text: string) => void) | undefined;
}

/** What a model answered. */
export interface ChatResponse {
  readonly content: string;
  readonly toolCalls: readonly ChatToolCall[];
  readonly usage?: ModelUsage;
}

/** The one thing AGBoss needs of a model. Adapt any LangChain chat model with `fromLangChain`. */
export interface ChatModel {
  /** Answers one turn. */
  invoke(request: ChatRequest): Promise<ChatResponse>;
}
