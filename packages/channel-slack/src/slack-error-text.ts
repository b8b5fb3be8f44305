/** Slack's own error code in a Web API failure (`not_in_channel`, `missing_scope: chat:write`), else the message. @internal */
export function slackErrorText(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const data = (error as { data?: { error?: unknown; needed?: unknown } }).data;
    if (typeof data?.error === "string") {
      return typeof data.needed === "string" ? `${data.error} (needs ${data.needed})` : data.error;
    }
  }
  return error instanceof Error ? error.message : String(error);
}
