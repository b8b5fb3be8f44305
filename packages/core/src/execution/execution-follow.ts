import { pendingOf } from "../answering/pause-book.js";
import { DtoValidationError } from "../errors/dto-validation-error.js";
import { ExecutionCancelledError } from "../errors/runtime-errors.js";
import { LogLevel } from "../logging/logger.js";
import type { PauseRecord } from "../pauses/pause-record.js";
import { PauseResolution, PauseStatus } from "../pauses/pause-status.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import { ExecutionStatus } from "../records/execution-status.js";
import { pauseEventOf } from "../services/followers.js";
import { type StreamError, streamErrorOf } from "../services/progress.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import type { StoredExecution } from "../store/stored-execution.js";
import { sleep } from "../time/clock.js";
import { ExecutionUnknownError } from "./execution-errors.js";
import type { ExecutionOutput } from "./execution-output.js";
import type { ExecutionStreamEvent } from "./execution-stream.js";

/**
 * What `app.follow` follows: a thread (the execution that is its latest when the follow begins), or an
 * execution (the tree it belongs to: a child execution's id follows its root).
 */
export type FollowTarget =
  | { readonly threadId: string; readonly executionId?: undefined }
  | { readonly executionId: string; readonly threadId?: undefined };

/** Options of `app.follow`. */
export interface FollowOptions {
  /** The tenant the thread or execution belongs to. Default `"default"`. */
  readonly tenantId?: string;
  /** Stops following: the loop ends quietly (the run goes on). */
  readonly signal?: AbortSignal;
  /**
   * How often the store is read for what other instances did (pauses asked, answered and withdrawn, and
   * how the execution came to rest), in milliseconds on the application's Clock. Default 1000.
   */
  readonly pollIntervalMs?: number;
}

/** How often a follow reads the store when its options do not say. */
export const DEFAULT_FOLLOW_POLL_MS = 1_000;

/**
 * An execution followed from outside the call that runs it, from this process or another one sharing
 * the store: iterate it for its events (`for await (const event of app.follow({ threadId }))`).
 *
 * A pass running in this process tells its followers everything `app.stream` shows (model text and
 * turns, tools, budgets, pauses) as it happens; what runs elsewhere is read from the store every
 * `pollIntervalMs`: `pause.asked`, `pause.answered` and `pause.withdrawn` from the tree's pauses, and
 * `execution.paused` / `execution.finished` / `execution.failed` from its record. Each event comes once,
 * however it was learnt. The follow goes on through `execution.paused` (the answers are awaited too) and
 * ends after `execution.finished` or `execution.failed`; an execution that ended before the follow began
 * gives that one event. A follow does not throw its execution's failure (`execution.failed` says it);
 * its loop throws `ExecutionUnknownError` for a thread or execution the tenant does not have. Leaving
 * the loop, or the `signal`, stops following, never the run.
 *
 * Outputs read from the store are as the execution record keeps them: sensitive fields masked.
 */
export class ExecutionFollow implements AsyncIterable<ExecutionStreamEvent> {
  readonly #services: RuntimeServices;
  readonly #target: FollowTarget;
  readonly #tenantId: string;
  readonly #pollMs: number;
  readonly #signals: readonly AbortSignal[];
  #iterated = false;

  /** @internal Use `app.follow`. `closing` aborts when the application closes. */
  constructor(args: {
    readonly services: RuntimeServices;
    readonly target: FollowTarget;
    readonly tenantId: string;
    readonly pollIntervalMs: number;
    readonly signal: AbortSignal | undefined;
    readonly closing: AbortSignal;
  }) {
    this.#services = args.services;
    this.#target = args.target;
    this.#tenantId = args.tenantId;
    this.#pollMs = args.pollIntervalMs;
    this.#signals = args.signal === undefined ? [args.closing] : [args.signal, args.closing];
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ExecutionStreamEvent> {
    if (this.#iterated) throw new TypeError("An ExecutionFollow can be iterated once.");
    this.#iterated = true;
    const stop = new AbortController();
    const stopped = AbortSignal.any([stop.signal, ...this.#signals]);
    if (stopped.aborted) return;
    const root = await this.#find();
    const seen = new Seen();
    const queue: ExecutionStreamEvent[] = [];
    let wake: (() => void) | undefined;
    const offer = (event: { readonly type: string }, pauseKey: string | undefined) => {
      if (!seen.accept(event, pauseKey)) return;
      queue.push(event as ExecutionStreamEvent);
      wake?.();
    };
    const onStop = () => wake?.();
    stopped.addEventListener("abort", onStop, { once: true });
    const unlisten = this.#services.followers?.listen(this.#tenantId, root.rootExecutionId, offer);
    const polling = this.#poll(root, offer, seen, stopped);
    try {
      for (let read = 0; ; ) {
        if (read < queue.length) {
          const event = queue[read] as ExecutionStreamEvent;
          read += 1;
          yield event;
          if (event.type === "execution.finished" || event.type === "execution.failed") return;
          continue;
        }
        queue.length = 0;
        read = 0;
        if (stopped.aborted) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      stop.abort();
      stopped.removeEventListener("abort", onStop);
      unlisten?.();
      await polling;
    }
  }

  /** The root execution to follow, as stored now. */
  async #find(): Promise<StoredExecution> {
    const { store } = this.#services;
    const tenantId = this.#tenantId;
    let executionId = this.#target.executionId;
    if (executionId === undefined) {
      const thread = await store.threads.findByTenantIdAndThreadId(tenantId, this.#target.threadId as string);
      executionId = thread?.latestExecutionId;
    }
    const found =
      executionId === undefined
        ? undefined
        : await store.executions.findByTenantIdAndExecutionId(tenantId, executionId);
    const root =
      found === undefined || found.rootExecutionId === found.executionId
        ? found
        : await store.executions.findByTenantIdAndExecutionId(tenantId, found.rootExecutionId);
    if (root === undefined) {
      throw new ExecutionUnknownError(
        this.#target.executionId === undefined
          ? { threadId: this.#target.threadId as string }
          : { executionId: this.#target.executionId },
        tenantId,
      );
    }
    return root;
  }

  /**
   * Reads the tree's record and pauses every `pollIntervalMs` until the follow ends: two bounded reads
   * (the record by its key, the tree's pauses by the tree's index). A read that fails is logged
   * (`follow.poll-failed`) and tried again at the next round.
   */
  async #poll(
    first: StoredExecution,
    offer: (event: { readonly type: string }, pauseKey: string | undefined) => void,
    seen: Seen,
    stopped: AbortSignal,
  ): Promise<void> {
    const { store, clock, logger } = this.#services;
    let stored: StoredExecution | undefined = first;
    for (let round = 0; !stopped.aborted && !seen.ended; round += 1) {
      try {
        stored ??= await store.executions.findByTenantIdAndExecutionId(this.#tenantId, first.executionId);
        if (stored !== undefined) this.#read(stored, await this.#pausesOf(stored), round === 0, offer, seen);
      } catch (error) {
        logger.log({
          level: LogLevel.Warn,
          event: "follow.poll-failed",
          message: `reading execution ${first.executionId} for its followers failed; trying again in ${this.#pollMs} ms: ${error instanceof Error ? error.message : String(error)}`,
          fields: { tenantId: this.#tenantId, executionId: first.executionId },
          at: clock.now(),
        });
      }
      stored = undefined;
      if (seen.ended) return;
      await sleep(clock, this.#pollMs, stopped).catch(() => undefined);
    }
  }

  /** The tree's pauses, by the tree's index; none for an execution that ended (only its rest is told). */
  #pausesOf(stored: StoredExecution): Promise<PauseRecord[]> {
    return this.#services.store.pauses.list({
      tenantId: this.#tenantId,
      rootExecutionId: stored.executionId,
    });
  }

  /**
   * What one read of the store tells: each pause's step not told yet (asked, then answered or
   * withdrawn), then how the execution rests. The first read tells no history: an execution that ended
   * gives its rest alone, and closed pauses are taken as told.
   */
  #read(
    stored: StoredExecution,
    pauses: readonly PauseRecord[],
    first: boolean,
    offer: (event: { readonly type: string }, pauseKey: string | undefined) => void,
    seen: Seen,
  ): void {
    const now = this.#services.clock.now();
    const status = stored.status;
    const ended =
      status === ExecutionStatus.Completed ||
      status === ExecutionStatus.Failed ||
      status === ExecutionStatus.Cancelled;
    if (!(first && ended)) {
      for (const pause of pauses) {
        if (first && pause.status !== PauseStatus.Pending) seen.told(pause.pauseId, "asked");
        if (first && (pause.status === PauseStatus.Taken || pause.status === PauseStatus.Cancelled)) {
          seen.told(pause.pauseId, "closed");
        }
        offer(pauseEventOf(pause, "pause.asked", now), pause.pauseId);
        const closing = closingOf(pause);
        if (closing !== undefined) offer(pauseEventOf(pause, closing, now), pause.pauseId);
      }
    }
    if (status === ExecutionStatus.Running) {
      seen.moving();
      return;
    }
    // A tree at rest on pauses has a pending one and none answered but not taken: a record that says
    // `paused` otherwise is older than an answer, or than a cancel that has not stored its end yet.
    if (
      status === ExecutionStatus.Paused &&
      (pauses.some((p) => p.status === PauseStatus.Resolved) ||
        !pauses.some((p) => p.status === PauseStatus.Pending))
    ) {
      return;
    }
    const rest = restOf(this.#services, stored, pauses, now);
    if (rest !== undefined) offer(rest, undefined);
  }
}

/** The closing event a pause's record shows, if it closed: an answer, or a withdrawal. */
function closingOf(pause: PauseRecord): "pause.answered" | "pause.withdrawn" | undefined {
  if (pause.status === PauseStatus.Pending) return undefined;
  if (pause.status === PauseStatus.Cancelled) return "pause.withdrawn";
  // Its deadline took the question back from its channel: another role is asked, or the expiry answered.
  if (pause.resolution === PauseResolution.Escalated || pause.resolution === PauseResolution.Expired) {
    return "pause.withdrawn";
  }
  return "pause.answered";
}

/** How a stored execution rests, as the stream's last event; undefined while it runs. */
function restOf(
  services: RuntimeServices,
  stored: StoredExecution,
  pauses: readonly PauseRecord[],
  now: number,
): ExecutionStreamEvent | undefined {
  const record = stored.record as ExecutionRecord;
  const base = {
    executionId: stored.executionId,
    rootExecutionId: stored.rootExecutionId,
    threadId: stored.threadId,
    at: new Date(now).toISOString(),
  };
  const output = (status: ExecutionStatus, pending: readonly PauseRecord[]): ExecutionOutput => ({
    status,
    output: status === ExecutionStatus.Completed ? record.output : undefined,
    threadId: stored.threadId,
    executionId: stored.executionId,
    pending: pending.map((p) => pendingOf(services.assembled, p)),
    children: record.children ?? [],
  });
  switch (stored.status) {
    case ExecutionStatus.Paused:
      return {
        ...base,
        type: "execution.paused",
        output: output(
          ExecutionStatus.Paused,
          pauses.filter((p) => p.status === PauseStatus.Pending),
        ),
      };
    case ExecutionStatus.Completed:
      return { ...base, type: "execution.finished", output: output(ExecutionStatus.Completed, []) };
    case ExecutionStatus.Failed:
    case ExecutionStatus.Cancelled:
      return { ...base, type: "execution.failed", error: errorOf(stored, record) };
    default:
      return undefined;
  }
}

/** The error of a failed or cancelled record, as the stream shows it. */
function errorOf(stored: StoredExecution, record: ExecutionRecord): StreamError {
  if (record.error !== undefined) {
    return { name: record.error.name, code: record.error.code, message: record.error.message };
  }
  if (stored.status === ExecutionStatus.Cancelled) {
    return streamErrorOf(new ExecutionCancelledError(stored.threadId));
  }
  return { name: "Error", message: `Execution ${stored.executionId} failed.` };
}

/**
 * What a follow has told, so each event comes once whether a pass of this process told it or a read of
 * the store found it: each pause's asking and closing (by the pause's id), whether the tree's paused
 * rest was told since it last moved, and whether it ended.
 */
class Seen {
  readonly #told = new Set<string>();
  #pausedTold = false;
  ended = false;

  told(pauseId: string, what: "asked" | "closed"): void {
    this.#told.add(`${what}:${pauseId}`);
  }

  /** The record says the tree runs: its next paused rest is new. */
  moving(): void {
    this.#pausedTold = false;
  }

  /** Whether `event` is news, taking note of it when it is. */
  accept(event: { readonly type: string }, pauseKey: string | undefined): boolean {
    if (this.ended) return false;
    switch (event.type) {
      case "execution.finished":
      case "execution.failed":
        this.ended = true;
        return true;
      case "execution.paused":
        if (this.#pausedTold) return false;
        this.#pausedTold = true;
        return true;
      case "pause.asked":
        if (pauseKey !== undefined) {
          if (this.#told.has(`asked:${pauseKey}`)) return false;
          this.told(pauseKey, "asked");
        }
        break;
      case "pause.answered":
      case "pause.withdrawn":
        if (pauseKey !== undefined) {
          if (this.#told.has(`closed:${pauseKey}`)) return false;
          this.told(pauseKey, "asked");
          this.told(pauseKey, "closed");
        }
        break;
    }
    // Anything else the tree did: a paused rest after it is news.
    this.#pausedTold = false;
    return true;
  }
}

/**
 * `app.follow`: checks the target and the options (a `DtoValidationError` names what is wrong) and
 * returns the follow, which reads nothing until it is iterated.
 * @internal
 */
export function followExecution(
  services: RuntimeServices,
  target: FollowTarget,
  options: FollowOptions,
  closing: AbortSignal,
): ExecutionFollow {
  const issues: { path: string; message: string }[] = [];
  const { threadId, executionId } = (target ?? {}) as { threadId?: unknown; executionId?: unknown };
  const named = [threadId, executionId].filter((v) => v !== undefined);
  if (named.length !== 1 || typeof named[0] !== "string" || named[0] === "") {
    issues.push({
      path: "target",
      message: "follow a { threadId } or an { executionId }: one non-empty text",
    });
  }
  const { tenantId = "default", signal, pollIntervalMs = DEFAULT_FOLLOW_POLL_MS } = options ?? {};
  if (typeof tenantId !== "string" || tenantId === "") {
    issues.push({ path: "tenantId", message: "a tenantId is a non-empty text" });
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    issues.push({ path: "signal", message: "a signal is an AbortSignal" });
  }
  if (typeof pollIntervalMs !== "number" || !Number.isFinite(pollIntervalMs) || pollIntervalMs <= 0) {
    issues.push({ path: "pollIntervalMs", message: "pollIntervalMs is a positive number of milliseconds" });
  }
  if (issues.length > 0) throw new DtoValidationError("FollowOptions", issues);
  return new ExecutionFollow({
    services,
    target: typeof threadId === "string" ? { threadId } : { executionId: executionId as string },
    tenantId,
    pollIntervalMs,
    signal,
    closing,
  });
}
