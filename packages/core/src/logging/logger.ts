/** How much a log line matters. */
export const LogLevel = {
  Debug: "debug",
  Info: "info",
  Warn: "warn",
  Error: "error",
} as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** One structured log line: a stable event name and its fields. */
export interface LogEntry {
  readonly level: LogLevel;
  /** A stable name, e.g. `channel.withdraw-failed`. */
  readonly event: string;
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
  /** Epoch milliseconds on the application's Clock. */
  readonly at: number;
}

/** Where AGBoss writes its log. Provide your own on `createApp(App, { logger })`. */
export interface Logger {
  /** Writes one entry. */
  log(entry: LogEntry): void;
}

/** True when `level` is at least `minimum`. */
export function isLevelEnabled(level: LogLevel, minimum: LogLevel): boolean {
  return RANK[level] >= RANK[minimum];
}

/** Writes entries at or above a level to the console, one JSON object per line. */
export class ConsoleLogger implements Logger {
  readonly #minimum: LogLevel;

  constructor(options: { level?: LogLevel } = {}) {
    this.#minimum = options.level ?? LogLevel.Warn;
  }

  log(entry: LogEntry): void {
    if (!isLevelEnabled(entry.level, this.#minimum)) return;
    const line = JSON.stringify({
      at: new Date(entry.at).toISOString(),
      level: entry.level,
      event: entry.event,
      message: entry.message,
      ...entry.fields,
    });
    if (entry.level === LogLevel.Error || entry.level === LogLevel.Warn) console.error(line);
    else console.log(line);
  }
}

/** Keeps every entry in memory; useful in tests (`logger.entries`). */
export class MemoryLogger implements Logger {
  readonly entries: LogEntry[] = [];

  log(entry: LogEntry): void {
    this.entries.push(entry);
  }
}
