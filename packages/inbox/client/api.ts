import { INBOX_REQUEST_HEADER, type InboxAudit, type InboxPause } from "../src/inbox-types.js";

/** A problem document as the server sends it. */
export interface Problem {
  readonly status: number;
  readonly code?: string;
  readonly title?: string;
  readonly detail?: string;
  readonly reason?: string;
  readonly issues?: readonly { readonly path: string; readonly message: string }[];
}

/** A request the server refused, with its problem document. */
export class ProblemError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
    this.problem = problem;
  }
}

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(path, { credentials: "same-origin", ...init });
  const text = await response.text();
  const body = text === "" ? {} : (JSON.parse(text) as unknown);
  if (!response.ok) throw new ProblemError({ status: response.status, ...(body as object) });
  return body as T;
}

export function listPauses(): Promise<{ pauses: InboxPause[] }> {
  return request("api/pauses");
}

/** What an answer from the page returned. */
export interface Outcome {
  readonly outcome: "recorded" | "already_resolved";
  readonly resolution?: string;
  readonly by?: string;
}

export function answerPause(pauseId: string, body: Record<string, unknown>): Promise<Outcome> {
  return request(`api/pauses/${encodeURIComponent(pauseId)}/answer`, {
    method: "POST",
    headers: { "content-type": "application/json", [INBOX_REQUEST_HEADER]: "1" },
    body: JSON.stringify(body),
  });
}

export function auditOf(executionId: string): Promise<InboxAudit> {
  return request(`api/executions/${encodeURIComponent(executionId)}`);
}
