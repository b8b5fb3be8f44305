import { MASK } from "../dto/sensitive.js";
import type { PiiPolicy } from "./pii-policy.js";
import { hideableText } from "./pii-token-map.js";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A copy of `value` as a record may keep it: in every string, what the policies' detectors find is
 * replaced by {@link MASK} — pattern matches, and the `sensitive(…)` values in `sensitive` for a
 * sensitive-fields detector; a number equal to one of those values becomes {@link MASK} too. Whatever
 * a policy would do for a model (a token, a refusal), a record shows the mask: it is read by people.
 * @internal
 */
export function maskFindings(
  value: unknown,
  policies: readonly PiiPolicy[],
  sensitive: readonly unknown[],
): unknown {
  if (policies.length === 0 || value === undefined) return value;
  const patterns: RegExp[] = [];
  const numbers = new Set<string>();
  for (const { detector } of policies) {
    if (detector.kind === "pattern" && detector.pattern !== undefined) patterns.push(detector.pattern);
    if (detector.kind !== "fields") continue;
    const texts = sensitive
      .map((v) => hideableText(v))
      .filter((t): t is string => t !== undefined && t !== MASK);
    for (const v of sensitive) {
      if ((typeof v === "number" || typeof v === "bigint") && hideableText(v) !== undefined)
        numbers.add(String(v));
    }
    if (texts.length > 0) {
      const longestFirst = [...new Set(texts)].sort((a, b) => b.length - a.length).map(escapeRegExp);
      patterns.push(new RegExp(longestFirst.join("|"), "g"));
    }
  }
  const maskText = (text: string) => patterns.reduce((t, pattern) => t.replace(pattern, MASK), text);
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return maskText(item);
    if ((typeof item === "number" || typeof item === "bigint") && numbers.has(String(item))) return MASK;
    if (Array.isArray(item)) return item.map(walk);
    if (typeof item === "object" && item !== null) {
      return Object.fromEntries(Object.entries(item).map(([key, v]) => [key, walk(v)]));
    }
    return item;
  };
  return walk(value);
}
