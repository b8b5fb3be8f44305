import { z } from "zod";
import { DtoValidationError } from "../errors/dto-validation-error.js";

const DTO_SCHEMA = Symbol.for("agboss.dto.schema");

/** Any zod object schema a DTO can be built on. */
export type DtoSchema = z.ZodObject<z.ZodRawShape>;

/**
 * A DTO class: a type (its instances are the schema's output) and a value (it carries the schema).
 * Build one with {@link Dto}.
 */
export interface DtoClass<T = unknown> {
  new (): T;
  readonly name: string;
  /** The zod schema that validates it. */
  readonly schema: DtoSchema;
}

/** The value type a DTO class describes. */
export type DtoValue<TDto> = TDto extends DtoClass<infer T> ? T : never;

/**
 * Declares a DTO class backed by a zod object schema.
 *
 * @example
 * export class RefundCardInputDto extends Dto({
 *   orderId: z.string().min(1),
 *   amountCents: z.number().int().positive(),
 *   cardNumber: sensitive(z.string()),
 * }) {}
 */
export function Dto<TShape extends z.ZodRawShape>(
  shape: TShape | z.ZodObject<TShape>,
): DtoClass<z.output<z.ZodObject<TShape>>> {
  const schema = shape instanceof z.ZodObject ? shape : z.object(shape);
  abstract class DtoBase {
    static readonly schema = schema;
    static readonly [DTO_SCHEMA] = true;
  }
  return DtoBase as unknown as DtoClass<z.output<z.ZodObject<TShape>>>;
}

/** True when `value` is a class built with {@link Dto}. */
export function isDtoClass(value: unknown): value is DtoClass {
  return typeof value === "function" && (value as unknown as Record<symbol, unknown>)[DTO_SCHEMA] === true;
}

/** Validates `value` against the DTO and returns the parsed value, or throws a {@link DtoValidationError} naming every field. */
export function parseDto<T>(dto: DtoClass<T>, value: unknown, context?: string): T {
  const result = dto.schema.safeParse(value);
  if (result.success) return result.data as T;
  throw new DtoValidationError(
    dto.name,
    result.error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message })),
    context === undefined ? {} : { context },
  );
}

/** The DTO as a JSON Schema object, for a model's tool definition. */
export function dtoJsonSchema(dto: DtoClass): Record<string, unknown> {
  const schema = z.toJSONSchema(dto.schema, { unrepresentable: "any" }) as Record<string, unknown>;
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}
