/** Escapes text for Slack's mrkdwn: `&`, `<` and `>` would otherwise start entities and links. @internal */
export function escapeMrkdwn(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

const SLACK_USER_ID = /^[UW][A-Z0-9]{2,}$/;

/** A mention for a Slack user id, else the escaped text (an answerer your own mapping named). @internal */
export function mentionOf(who: string): string {
  return SLACK_USER_ID.test(who) ? `<@${who}>` : escapeMrkdwn(who);
}

/** A date Slack shows in each reader's own time zone, with the ISO time as the fallback. @internal */
export function slackDate(at: number | string): string {
  const ms = typeof at === "number" ? at : Date.parse(at);
  if (Number.isNaN(ms)) return escapeMrkdwn(String(at));
  return `<!date^${Math.floor(ms / 1000)}^{date_short_pretty} at {time}|${new Date(ms).toISOString()}>`;
}

/** Cuts `text` to at most `max` characters, ending with an ellipsis when cut. @internal */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
