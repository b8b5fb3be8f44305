import { type DtoClass, dtoJsonSchema, MASK, maskWith } from "@agboss/core";
import { confirm, input, number, password, select } from "@inquirer/prompts";

/** What every prompt of a session gets: its streams and the session's signal. @internal */
export interface PromptContext {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  readonly signal: AbortSignal;
}

/** The part of a zod schema the form uses, so this package needs no zod of its own. */
interface FieldSchema {
  safeParse(value: unknown): { success: boolean; error?: { issues: readonly { message: string }[] } };
}

type JsonValue = string | number | boolean | null;

/** How a field is asked. */
type FieldPrompt =
  | { readonly kind: "choice"; readonly options: readonly JsonValue[] }
  | { readonly kind: "boolean" }
  | { readonly kind: "number" }
  | { readonly kind: "text" }
  | { readonly kind: "json" };

/** One field of an answer DTO, read from its zod schema and its JSON Schema. @internal */
export interface AnswerField {
  readonly key: string;
  readonly description: string | undefined;
  /** The field accepts no value: Enter (or the skip choice) leaves it out. */
  readonly optional: boolean;
  /** Marked with `sensitive(…)`: typed without echo. */
  readonly sensitive: boolean;
  readonly prompt: FieldPrompt;
  readonly schema: FieldSchema;
}

const SKIP = Symbol("skip");

function promptOf(json: Record<string, unknown>): FieldPrompt {
  if (Array.isArray(json.enum) && json.enum.length > 0) return { kind: "choice", options: json.enum };
  if ("const" in json) return { kind: "choice", options: [json.const as JsonValue] };
  if (json.type === "boolean") return { kind: "boolean" };
  if (json.type === "number" || json.type === "integer") return { kind: "number" };
  if (json.type === "string") return { kind: "text" };
  return { kind: "json" };
}

/**
 * The fields of an answer DTO, in declaration order: enums become a list to pick from, booleans a
 * yes/no, numbers a number, strings a line of text, anything else (objects, arrays, unions) JSON.
 * @internal
 */
export function answerFields(dto: DtoClass): AnswerField[] {
  const json = dtoJsonSchema(dto);
  const properties = (json.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(dto.schema.shape).map(([key, zodField]) => {
    const schema = zodField as unknown as FieldSchema;
    const property = properties[key] ?? {};
    return {
      key,
      description: typeof property.description === "string" ? property.description : undefined,
      optional: schema.safeParse(undefined).success,
      sensitive: maskWith(zodField as Parameters<typeof maskWith>[0], "x") === MASK,
      prompt: promptOf(property),
      schema,
    };
  });
}

/** `true`, or what the field's schema says is wrong with `value`. */
function check(field: AnswerField, value: unknown): true | string {
  const result = field.schema.safeParse(value);
  if (result.success) return true;
  return result.error?.issues.map((i) => i.message).join("; ") || "not a valid value";
}

function label(field: AnswerField, hint?: string): string {
  const about = field.description === undefined ? "" : ` (${field.description})`;
  const extra = [field.optional ? "optional" : undefined, hint].filter((h) => h !== undefined).join(", ");
  return `${field.key}${about}${extra === "" ? "" : ` [${extra}]`}`;
}

function show(value: JsonValue): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Asks one field; `SKIP` when an optional field is left out. */
async function askField(field: AnswerField, previous: unknown, context: PromptContext): Promise<unknown> {
  const { prompt } = field;
  if (prompt.kind === "choice" || (prompt.kind === "boolean" && field.optional)) {
    const options: readonly JsonValue[] = prompt.kind === "choice" ? prompt.options : [true, false];
    const choices = options.map((value) => ({
      value: value as JsonValue | typeof SKIP,
      name: prompt.kind === "boolean" ? (value === true ? "Yes" : "No") : show(value),
    }));
    if (field.optional) choices.push({ value: SKIP, name: "(leave it out)" });
    const known = options.includes(previous as JsonValue) ? (previous as JsonValue) : undefined;
    return select<JsonValue | typeof SKIP>(
      { message: label(field), choices, ...(known === undefined ? {} : { default: known }) },
      context,
    );
  }
  if (prompt.kind === "boolean") {
    return confirm(
      { message: label(field), ...(typeof previous === "boolean" ? { default: previous } : {}) },
      context,
    );
  }
  if (prompt.kind === "number") {
    const value = await number(
      {
        message: label(field, field.optional ? "Enter to leave it out" : undefined),
        step: "any",
        required: !field.optional,
        ...(typeof previous === "number" ? { default: previous } : {}),
        validate: (n: number | undefined) => (n === undefined && field.optional ? true : check(field, n)),
      },
      context,
    );
    return value === undefined ? SKIP : value;
  }
  if (prompt.kind === "text" && field.sensitive) {
    // Typed without echo; on a second round Enter keeps what was typed before.
    const keep = typeof previous === "string";
    const value = await password(
      {
        message: label(
          field,
          keep ? "Enter to keep what you typed" : field.optional ? "Enter to leave it out" : undefined,
        ),
        mask: "*",
        validate: (text: string) => (text === "" && (keep || field.optional) ? true : check(field, text)),
      },
      context,
    );
    if (value !== "") return value;
    return keep ? previous : SKIP;
  }
  const isJson = prompt.kind === "json";
  const parse = (text: string): unknown => (isJson ? JSON.parse(text) : text);
  const value = await input(
    {
      message: label(
        field,
        [isJson ? "JSON" : undefined, field.optional ? "Enter to leave it out" : undefined]
          .filter(Boolean)
          .join(", ") || undefined,
      ),
      ...(previous === undefined ? {} : { default: isJson ? JSON.stringify(previous) : String(previous) }),
      validate: (text: string) => {
        if (text === "" && field.optional) return true;
        try {
          return check(field, parse(text));
        } catch {
          return "not valid JSON";
        }
      },
    },
    context,
  );
  return value === "" && field.optional ? SKIP : parse(value);
}

/**
 * Asks `fields` one by one, each checked by its own schema as it is typed, starting from `previous`
 * (whose values are offered as defaults), and returns the whole answer: `previous` with the fields
 * asked replaced or, when left out, removed.
 * @internal
 */
export async function askAnswer(
  fields: readonly AnswerField[],
  previous: Readonly<Record<string, unknown>>,
  context: () => PromptContext,
): Promise<Record<string, unknown>> {
  const answer: Record<string, unknown> = { ...previous };
  for (const field of fields) {
    const value = await askField(field, previous[field.key], context());
    if (value === SKIP) delete answer[field.key];
    else answer[field.key] = value;
  }
  return answer;
}
