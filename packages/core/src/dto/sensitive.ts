import { z } from "zod";

const sensitiveFields = z.registry<{ sensitive: true }>();

/** The text that stands for a masked value. */
export const MASK = "***";

/**
 * Marks a DTO field as sensitive: asks, pending pauses, records and logs show it masked.
 *
 * @example
 * class CardDto extends Dto({ cardNumber: sensitive(z.string()) }) {}
 */
export function sensitive<T extends z.ZodType>(schema: T): T {
  sensitiveFields.add(schema, { sensitive: true });
  return schema;
}

/** True when the schema was marked with {@link sensitive}. */
export function isSensitive(schema: z.ZodType): boolean {
  return sensitiveFields.has(schema);
}

/** A copy of `value` with every field its schema marks sensitive replaced by {@link MASK}. */
export function maskWith(schema: z.ZodType, value: unknown): unknown {
  if (isSensitive(schema)) return value === undefined ? undefined : MASK;
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
    case "readonly":
    case "nonoptional":
      return maskWith(def.innerType as z.ZodType, value);
    case "pipe":
      return maskWith(def.in as z.ZodType, value);
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
      const shape = def.shape as Record<string, z.ZodType>;
      const out: Record<string, unknown> = {};
      for (const [key, field] of Object.entries(value)) {
        const fieldSchema = shape[key];
        out[key] = fieldSchema === undefined ? field : maskWith(fieldSchema, field);
      }
      return out;
    }
    case "array":
      return Array.isArray(value) ? value.map((item) => maskWith(def.element as z.ZodType, item)) : value;
    default:
      return value;
  }
}
