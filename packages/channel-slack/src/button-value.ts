/** What a button carries: the pause it answers, the tenant it was asked for, and for a choice its answer. @internal */
export interface ButtonValue {
  readonly pauseId: string;
  readonly tenantId: string;
  readonly answer?: Record<string, unknown> | undefined;
}

/** Slack's limit on a button's value. @internal */
export const MAX_BUTTON_VALUE = 2000;

/** The button value for a pause. @internal */
export function encodeButtonValue(value: ButtonValue): string {
  return JSON.stringify({
    p: value.pauseId,
    t: value.tenantId,
    ...(value.answer === undefined ? {} : { a: value.answer }),
  });
}

/** The pause a button value names, or undefined for a value this channel did not write. @internal */
export function decodeButtonValue(value: unknown): ButtonValue | undefined {
  if (typeof value !== "string") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { p, t, a } = parsed as Record<string, unknown>;
  if (typeof p !== "string" || p === "" || typeof t !== "string") return undefined;
  const answer =
    typeof a === "object" && a !== null && !Array.isArray(a) ? (a as Record<string, unknown>) : undefined;
  return { pauseId: p, tenantId: t, answer };
}
