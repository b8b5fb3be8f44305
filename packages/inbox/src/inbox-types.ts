// The inbox's wire format: what its JSON routes and its event stream send the page. Kept free of
// imports so the page's own code can use it too.

/** A JSON Schema, as the DTOs export it. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** A pending pause as the inbox shows it. */
export interface InboxPause {
  readonly pauseId: string;
  /** `approval` (approve, reject, override the arguments) or `question` (the role's answer DTO). */
  readonly kind: "approval" | "question";
  /** `thread-owner` (the person's own thread asks them) or `channel` (a role they answer). */
  readonly answeredBy: "thread-owner" | "channel";
  /** The channel role (or concrete channel) asked, and its description. */
  readonly role: string;
  readonly roleDescription: string | undefined;
  readonly workflow: { readonly name: string; readonly version: string };
  readonly agent: string;
  readonly tool: string;
  readonly toolDescription: string | undefined;
  /** The call's arguments, sensitive fields masked. */
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly threadId: string;
  /** The execution that asked: the root's id, or a child workflow's inside its tree. */
  readonly executionId: string;
  /** The tree's root execution: the id whose audit trail (`GET /api/executions/{id}`) holds this pause. */
  readonly rootExecutionId: string;
  /** When it was asked, ISO 8601. */
  readonly askedAt: string;
  /** True when the role reads free-text replies (it has a reply interpreter). */
  readonly readsReplies: boolean;
  /**
   * The forms: the tool's input (for overriding the arguments of an approval; sensitive fields carry
   * `"x-sensitive": true`), and a question role's answer DTO.
   */
  readonly schemas: { readonly arguments: JsonSchema; readonly answer?: JsonSchema };
}

/** How a pause that left the list closed. */
export interface InboxClosed {
  readonly pauseId: string;
  /** `resolved` / `taken` (answered), `cancelled` (withdrawn or cancelled), or `gone` (no longer readable). */
  readonly status: string;
  /** `replied`, `decided`, `withdrawn`, `cancelled`, when known. */
  readonly resolution?: string;
  /** Who answered it, when someone did. */
  readonly by?: string;
  /** When it closed, ISO 8601. */
  readonly at?: string;
}

/** One entry of an execution's audit trail. */
export interface InboxAuditEntry {
  readonly role: string;
  readonly kind: string;
  readonly tool: string | undefined;
  /** `replied`, `decided`, `withdrawn`, `cancelled`, or `pending` while it waits. */
  readonly resolution: string;
  /** Who answered, when someone did. */
  readonly responder: string | undefined;
  /** An approval's decision (approved, reason, overridden arguments), sensitive fields masked. */
  readonly decision: unknown;
  /** A question's answer, sensitive fields masked. */
  readonly answer: unknown;
  readonly askedAt: string;
  /** When it closed; empty while it waits. */
  readonly resolvedAt: string;
}

/** An execution's audit trail. */
export interface InboxAudit {
  readonly executionId: string;
  readonly workflow: { readonly name: string; readonly version: string };
  readonly status: string;
  readonly threadId: string;
  readonly entries: readonly InboxAuditEntry[];
}

/** What the event stream sends, each as an event of that name with the JSON as data. */
export interface InboxEvents {
  /** The whole list, newest first: first on every (re)connection. */
  readonly snapshot: { readonly pauses: readonly InboxPause[] };
  /** A pause newly asked. */
  readonly asked: { readonly pause: InboxPause };
  /** A pause answered (here or elsewhere), withdrawn or cancelled. */
  readonly closed: InboxClosed;
}

/** The header every answer from the page carries: a cross-site form cannot send it. */
export const INBOX_REQUEST_HEADER = "x-agboss-inbox";
