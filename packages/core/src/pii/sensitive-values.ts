import type { z } from "zod";
import { MASK, maskWith } from "../dto/sensitive.js";

/** A value with the schema it was validated by, so its sensitive fields can be found. @internal */
export interface SensitiveSource {
  readonly schema: z.ZodType;
  readonly value: unknown;
}

function leaves(value: unknown, out: unknown[]): void {
  if (Array.isArray(value)) for (const item of value) leaves(item, out);
  else if (typeof value === "object" && value !== null)
    for (const item of Object.values(value)) leaves(item, out);
  else if (value !== undefined && value !== null) out.push(value);
}

function diff(value: unknown, masked: unknown, out: unknown[]): void {
  if (masked === MASK && value !== MASK) {
    leaves(value, out);
    return;
  }
  if (Array.isArray(value) && Array.isArray(masked)) {
    for (const [i, item] of value.entries()) diff(item, masked[i], out);
  } else if (typeof value === "object" && value !== null && typeof masked === "object" && masked !== null) {
    for (const [key, item] of Object.entries(value))
      diff(item, (masked as Record<string, unknown>)[key], out);
  }
}

/** The values of the fields each source's schema marks `sensitive(…)` (leaves of objects too). @internal */
export function sensitiveValuesOf(sources: readonly SensitiveSource[]): unknown[] {
  const out: unknown[] = [];
  for (const { schema, value } of sources) diff(value, maskWith(schema, value), out);
  return out;
}
