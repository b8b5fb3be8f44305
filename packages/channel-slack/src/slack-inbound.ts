/** The parts of Slack's payloads the webhook reads; everything is checked, nothing trusted by shape. @internal */

/** A block_actions payload (interactivity). */
export interface BlockActionsPayload {
  readonly type: "block_actions";
  readonly user?: { readonly id?: string; readonly team_id?: string };
  readonly team?: { readonly id?: string } | null;
  readonly enterprise?: { readonly id?: string } | null;
  readonly channel?: { readonly id?: string };
  readonly container?: { readonly channel_id?: string; readonly message_ts?: string };
  readonly message?: {
    readonly ts?: string;
    readonly text?: string;
    readonly blocks?: unknown[];
    readonly metadata?: unknown;
  };
  readonly actions?: readonly { readonly action_id?: string; readonly value?: string }[];
}

/** An Events API envelope. */
export interface EventEnvelope {
  readonly type: "event_callback";
  readonly event_id?: string;
  readonly api_app_id?: string;
  readonly team_id?: string;
  readonly enterprise_id?: string | null;
  readonly event?: MessageEvent;
}

/** A `message` event. */
export interface MessageEvent {
  readonly type?: string;
  readonly subtype?: string;
  readonly channel?: string;
  readonly user?: string;
  readonly team?: string;
  readonly text?: string;
  readonly ts?: string;
  readonly thread_ts?: string;
  readonly bot_id?: string;
  readonly hidden?: boolean;
}

/** What a request turned out to be. */
export type Inbound =
  | { readonly kind: "url-verification"; readonly challenge: string }
  | { readonly kind: "event"; readonly envelope: EventEnvelope }
  | { readonly kind: "block-actions"; readonly payload: BlockActionsPayload }
  | { readonly kind: "other" };

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function classify(value: unknown): Inbound {
  const body = asObject(value);
  if (body === undefined) throw new SyntaxError("the body is not an object");
  if (body.type === "url_verification" && typeof body.challenge === "string") {
    return { kind: "url-verification", challenge: body.challenge };
  }
  if (body.type === "event_callback") return { kind: "event", envelope: body as unknown as EventEnvelope };
  if (body.type === "block_actions")
    return { kind: "block-actions", payload: body as unknown as BlockActionsPayload };
  return { kind: "other" };
}

/**
 * Reads a verified body: JSON for the Events API, a form with a `payload` field for interactivity.
 * Throws a SyntaxError for a body that is neither.
 */
export function parseInbound(body: Buffer, contentType: string): Inbound {
  const text = body.toString("utf8");
  const json =
    contentType.includes("application/json") || (contentType === "" && text.trimStart().startsWith("{"));
  if (json) return classify(JSON.parse(text));
  const form = new URLSearchParams(text);
  const payload = form.get("payload");
  if (payload !== null) return classify(JSON.parse(payload));
  if (form.has("ssl_check")) return { kind: "other" };
  throw new SyntaxError("the body is neither JSON nor a form with a payload");
}

/** True for a person's reply in a thread: not the parent itself, not a bot, not an edit or a deletion. */
export function isThreadReply(event: MessageEvent | undefined): event is MessageEvent & {
  channel: string;
  user: string;
  text: string;
  ts: string;
  thread_ts: string;
} {
  if (event?.type !== "message") return false;
  if (event.subtype !== undefined && event.subtype !== "thread_broadcast") return false;
  if (event.bot_id !== undefined || event.hidden === true) return false;
  return (
    typeof event.channel === "string" &&
    typeof event.user === "string" &&
    typeof event.text === "string" &&
    event.text.trim() !== "" &&
    typeof event.ts === "string" &&
    typeof event.thread_ts === "string" &&
    event.thread_ts !== event.ts
  );
}
