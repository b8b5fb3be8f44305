import type { JsonSchema } from "../src/inbox-types.js";

/** One field of a generated form, read from the DTO's JSON Schema. */
export interface Field {
  readonly name: string;
  readonly schema: Readonly<Record<string, unknown>>;
  readonly required: boolean;
  /** How it is edited: a text box, a number, a yes/no, a list of choices, or JSON for anything else. */
  readonly control: "text" | "number" | "boolean" | "choice" | "json";
  readonly sensitive: boolean;
}

/** The fields of an object schema, in the DTO's order. */
export function fieldsOf(schema: JsonSchema): Field[] {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, field]) => ({
    name,
    schema: field,
    required: required.has(name),
    control: Array.isArray(field.enum)
      ? "choice"
      : field.type === "string"
        ? "text"
        : field.type === "integer" || field.type === "number"
          ? "number"
          : field.type === "boolean"
            ? "boolean"
            : "json",
    sensitive: field["x-sensitive"] === true,
  }));
}

/** What a person typed, field by field (a checkbox as "true"/"false"). */
export type Inputs = Readonly<Record<string, string>>;

/** The value typed into a field, converted and checked against its schema. */
export type Read = { readonly value?: unknown; readonly error?: string };

/** Reads one field: undefined value for an optional field left empty. */
export function readField(field: Field, text: string): Read {
  const s = field.schema;
  if (field.control === "boolean") return { value: text === "true" };
  if (text.trim() === "") return field.required ? { error: "Required." } : {};
  if (field.control === "number") {
    const value = Number(text);
    if (!Number.isFinite(value)) return { error: "Enter a number." };
    if (s.type === "integer" && !Number.isInteger(value)) return { error: "Enter a whole number." };
    if (typeof s.minimum === "number" && value < s.minimum) return { error: `At least ${s.minimum}.` };
    if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum)
      return { error: `More than ${s.exclusiveMinimum}.` };
    if (typeof s.maximum === "number" && value > s.maximum) return { error: `At most ${s.maximum}.` };
    if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum)
      return { error: `Less than ${s.exclusiveMaximum}.` };
    return { value };
  }
  if (field.control === "choice") {
    const options = s.enum as unknown[];
    const value = options.find((o) => String(o) === text);
    return value === undefined ? { error: `Choose one of ${options.join(", ")}.` } : { value };
  }
  if (field.control === "text") {
    if (typeof s.minLength === "number" && text.length < s.minLength)
      return { error: `At least ${s.minLength} characters.` };
    if (typeof s.maxLength === "number" && text.length > s.maxLength)
      return { error: `At most ${s.maxLength} characters.` };
    if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(text))
      return { error: "Not in the expected form." };
    return { value: text };
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { error: "Enter JSON." };
  }
}

/** Reads every field; the value when all are valid, else the errors by field. */
export function readForm(
  fields: readonly Field[],
  inputs: Inputs,
  skip: (field: Field) => boolean = () => false,
): { value?: Record<string, unknown>; errors: Record<string, string> } {
  const value: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    if (skip(field)) continue;
    const read = readField(field, inputs[field.name] ?? "");
    if (read.error !== undefined) errors[field.name] = read.error;
    else if (read.value !== undefined) value[field.name] = read.value;
  }
  return Object.keys(errors).length > 0 ? { errors } : { value, errors };
}

/** What a field shows at first: the current value as text. */
export function textOf(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}
