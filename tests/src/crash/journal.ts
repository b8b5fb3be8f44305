import { createHash } from "node:crypto";
import { appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";

/**
 * Appends one JSON line to a journal shared by several processes (small appends are atomic). The line
 * starts with a newline too: a line torn by kill -9 then stays alone, and the next writer's line is
 * read whole instead of glued to it.
 */
export function journal(path: string | undefined, entry: Record<string, unknown>): void {
  if (path === undefined || path === "") return;
  appendFileSync(path, `\n${JSON.stringify({ ...entry, pid: process.pid, at: Date.now() })}\n`);
}

/**
 * Every JSON line of a journal, in order. A torn line (a writer killed mid-write) is skipped, and
 * counted in `torn` when given.
 */
export function readJournal<T = Record<string, unknown>>(text: string, torn?: { count: number }): T[] {
  const entries: T[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      entries.push(JSON.parse(line) as T);
    } catch {
      if (torn !== undefined) torn.count += 1;
    }
  }
  return entries;
}

/**
 * Blocks until the file `path` exists (polling every 20 ms), when `path` is set. Marks in `ledger` that
 * it waits, so a parent can see the process reached the gate. Throws the signal's reason once it aborts.
 */
export async function gate(
  name: string,
  path: string | undefined,
  ledger: string | undefined,
  signal: AbortSignal | undefined,
  fields: Record<string, unknown> = {},
): Promise<void> {
  if (path === undefined || path === "") return;
  journal(ledger, { event: "gate", gate: name, ...fields });
  for (;;) {
    if (signal?.aborted) {
      journal(ledger, { event: "gate-aborted", gate: name, ...fields, reason: String(signal.reason) });
      throw signal.reason;
    }
    if (existsSync(path)) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  journal(ledger, { event: "gate-open", gate: name, ...fields });
}

/** The key a tool run without an idempotency key hands the stand-in payment API. */
export const NO_KEY = "(no key)";

/**
 * The file by which the stand-in payment API (a directory) marks the idempotency key `key` applied: one
 * file per key, made with `wx`, so only the first call with a key makes it.
 */
export function effectPath(dir: string, key: string): string {
  return join(dir, createHash("sha256").update(key).digest("hex"));
}
