const KINDS = Symbol.for("agboss.error.kinds");

type Branded = { readonly [KINDS]?: readonly string[] };

/** Options every AGBoss error accepts. */
export interface AgbossErrorOptions {
  /** The error behind this one. */
  readonly cause?: unknown;
}

/**
 * The base of every error AGBoss throws: a stable `code`, a message that says what to do, and a `cause`.
 *
 * `instanceof` works across two installed copies of `@agboss/core`: each instance carries the names of
 * its classes under a `Symbol.for` key, and every class checks those names instead of its prototype.
 *
 * @example
 * try { await app.resume(request, options) } catch (err) {
 *   if (err instanceof AgbossError && err.code === "pause.unknown") return notFound();
 * }
 */
export class AgbossError extends Error {
  /** The name `instanceof` checks compare; subclasses set their own. */
  static readonly kind: string = "AgbossError";

  /** A stable identifier for the kind of failure, e.g. `pause.unknown`. */
  readonly code: string;

  constructor(code: string, message: string, options: AgbossErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    const kinds: string[] = [];
    for (let c: unknown = new.target; typeof c === "function" && c !== Error; c = Object.getPrototypeOf(c)) {
      const kind = (c as { kind?: unknown }).kind;
      if (typeof kind === "string" && !kinds.includes(kind)) kinds.push(kind);
    }
    Object.defineProperty(this, KINDS, { value: Object.freeze(kinds), enumerable: false });
    this.name = kinds[0] ?? "AgbossError";
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== "object" || value === null) return false;
    const kinds = (value as Branded)[KINDS];
    // `this` is the class on the right of `instanceof`: each subclass checks its own kind.
    // biome-ignore lint/complexity/noThisInStatic: the receiver must be the subclass, not AgbossError
    return Array.isArray(kinds) && kinds.includes(this.kind);
  }
}

/**
 * The first error in `error`'s `cause` chain (itself included) that is an instance of `type`. The
 * members of an aggregate (an `errors` array, as LangGraph raises for several failed tasks of one step)
 * are searched too.
 */
export function findCause<T>(error: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const e = queue.shift();
    if (e === undefined || e === null || seen.has(e)) continue;
    if (e instanceof type) return e as T;
    seen.add(e);
    const { cause, errors } = e as { cause?: unknown; errors?: unknown };
    if (cause !== undefined) queue.push(cause);
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return undefined;
}

/** True when `error`, or any error in its `cause` chain (or an aggregate's members), is an instance of `type`. */
export function hasCause(error: unknown, type: abstract new (...args: never[]) => unknown): boolean {
  return findCause(error, type) !== undefined;
}
