import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";

/** The part of better-sqlite3 the tracer patches (typed here: the bench does not need its type package). */
interface SqliteDatabase {
  readonly name: string;
}
type SqliteStatement = Record<"run" | "get" | "all" | "iterate", (...args: unknown[]) => unknown>;
type Prepare = (this: SqliteDatabase, sql: string) => SqliteStatement;

/** Wall time and count of each instrumented call, for `--trace-store`. */
export class CallTimings {
  readonly #calls = new Map<string, { count: number; ms: number }>();
  /** While false, calls are not counted (to time only some of what shares a database file). */
  enabled = true;

  /** Adds one call of `name` that took `ms`. */
  add(name: string, ms: number): void {
    if (!this.enabled) return;
    const entry = this.#calls.get(name);
    if (entry === undefined) this.#calls.set(name, { count: 1, ms });
    else {
      entry.count += 1;
      entry.ms += ms;
    }
  }

  /** Forgets every call so far (after warm-up). */
  reset(): void {
    this.#calls.clear();
  }

  /** Calls per execution and milliseconds per execution, slowest first. */
  perExecution(executions: number): { name: string; calls: number; ms: number }[] {
    return [...this.#calls]
      .map(([name, { count, ms }]) => ({ name, calls: count / executions, ms: ms / executions }))
      .sort((a, b) => b.ms - a.ms);
  }

  /**
   * Replaces every method of `target` (its own and its prototypes', up to `Object.prototype`) with one
   * that times it, as an own property: callers holding `target` see the timed version. Promises are
   * timed until they settle; async iterators only to their creation.
   */
  wrap(target: object, prefix: string): void {
    const names = new Set<string>();
    for (
      let proto: object | null = target;
      proto !== null && proto !== Object.prototype;
      proto = Object.getPrototypeOf(proto)
    ) {
      for (const name of Object.getOwnPropertyNames(proto)) {
        const descriptor = Object.getOwnPropertyDescriptor(proto, name);
        if (name !== "constructor" && typeof descriptor?.value === "function") names.add(name);
      }
    }
    const record = target as Record<string, unknown>;
    for (const name of names) {
      const original = record[name] as (...args: unknown[]) => unknown;
      const label = `${prefix}.${name}`;
      record[name] = (...args: unknown[]) => {
        const began = performance.now();
        const result = original.apply(target, args);
        if (result instanceof Promise) {
          return result.finally(() => this.add(label, performance.now() - began));
        }
        this.add(label, performance.now() - began);
        return result;
      };
    }
  }
}

/**
 * Counts SQL statements and the time spent running them, per database file, by patching
 * better-sqlite3's `prepare` and its statements' `run`, `get`, `all` and `iterate` (native work:
 * parsing, the query itself, commits and syncs). Returns a function that maps a file to its timings.
 */
export function traceSqlite(): (file: string) => CallTimings {
  const byFile = new Map<string, CallTimings>();
  const timingsOf = (file: string) => {
    let timings = byFile.get(file);
    if (timings === undefined) {
      timings = new CallTimings();
      byFile.set(file, timings);
    }
    return timings;
  };
  // The same copy the stores load: pnpm links one better-sqlite3 12.11.1 for the bench and both stores.
  const Database = createRequire(import.meta.url)("better-sqlite3") as { prototype: { prepare: Prepare } };
  const proto = Database.prototype;
  const prepare = proto.prepare;
  proto.prepare = function timedPrepare(this: SqliteDatabase, sql: string): SqliteStatement {
    const began = performance.now();
    const statement = prepare.call(this, sql);
    const timings = timingsOf(this.name);
    timings.add("sql.prepare", performance.now() - began);
    const verb = sql.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? "?";
    for (const method of ["run", "get", "all", "iterate"] as const) {
      const original = statement[method];
      statement[method] = (...a: unknown[]) => {
        const t0 = performance.now();
        const result = original.apply(statement, a);
        timings.add(`sql.${verb}`, performance.now() - t0);
        return result;
      };
    }
    return statement;
  };
  return timingsOf;
}
