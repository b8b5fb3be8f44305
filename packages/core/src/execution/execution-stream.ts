import { ExecutionStatus } from "../records/execution-status.js";
import type { ProgressEvent, StreamError, StreamEventBase } from "../services/progress.js";
import { streamErrorOf } from "../services/progress.js";
import type { ExecutionOutput } from "./execution-output.js";

/** How a streamed run came to rest: its last event. */
export type ExecutionRestEvent<TOutput = unknown> = StreamEventBase &
  (
    | {
        /** The run completed; `output` is what `execute` / `resume` resolves with. */
        readonly type: "execution.finished";
        readonly output: ExecutionOutput<TOutput>;
      }
    | {
        /** The run rests on pauses (`output.pending`); `output` is what `execute` / `resume` resolves with. */
        readonly type: "execution.paused";
        readonly output: ExecutionOutput<TOutput>;
      }
    | {
        /** The run failed, was cancelled, or was stopped: `error` is what `execute` / `resume` rejects with. */
        readonly type: "execution.failed";
        readonly error: StreamError;
      }
  );

/** How a streamed run began: its first event. */
export type ExecutionBeginEvent = StreamEventBase &
  (
    | {
        /** `app.stream` stored the new execution; the run starts. */
        readonly type: "execution.started";
        readonly workflow: string;
      }
    | {
        /** `app.streamResume` recorded the answer and took the tree; the run goes on. */
        readonly type: "execution.resumed";
        readonly workflow: string;
        /** The answered pause's id; undefined for a pause a channel answers. */
        readonly pauseId: string | undefined;
        readonly answeredBy: string;
      }
  );

/**
 * Every event of a streamed run: how it began, what its steps do as it happens, then how it came to
 * rest.
 */
export type ExecutionStreamEvent<TOutput = unknown> =
  | ExecutionBeginEvent
  | ProgressEvent
  | ExecutionRestEvent<TOutput>;

/**
 * A run as it happens: iterate it for its events (`for await (const event of app.stream(…))`), and
 * read `result` for what `execute` / `resume` would have returned. The last event is always
 * `execution.finished`, `execution.paused` or `execution.failed`; after `execution.failed` the loop
 * throws the run's error, as `execute` would. The run never waits for the reader: events queue until
 * they are read. Leaving the loop early stops reading, not the run. A `signal` stops this call's work
 * and detaches the caller; the execution stays running for the recovery sweep, and `app.cancel` ends it.
 * To watch a run another call started, use `app.follow`.
 */
export class ExecutionStream<TOutput = unknown> implements AsyncIterable<ExecutionStreamEvent<TOutput>> {
  /** What `execute` / `resume` would have resolved with, or rejected with. */
  readonly result: Promise<ExecutionOutput<TOutput>>;
  #queue: ExecutionStreamEvent<TOutput>[] = [];
  /** The next event to read in {@link #queue}: reading never shifts the array. */
  #head = 0;
  /** The reader left the loop: events are no longer kept. */
  #left = false;
  #wake: (() => void) | undefined;
  #ended = false;
  #error: { readonly error: unknown } | undefined;
  #iterated = false;

  /** The ids of the run, from its first event: the rest event carries them too. */
  #ids: Pick<StreamEventBase, "executionId" | "rootExecutionId" | "threadId"> = {
    executionId: "",
    rootExecutionId: "",
    threadId: "",
  };

  /**
   * @internal Use `app.stream` / `app.streamResume`. `run` starts the run with a listener for its
   * events; `now` stamps the rest event.
   */
  constructor(
    run: (listen: (event: { readonly type: string }) => void) => Promise<ExecutionOutput<TOutput>>,
    now: () => string,
  ) {
    const listen = (event: { readonly type: string }) => {
      const e = event as ExecutionStreamEvent<TOutput>;
      if (e.type === "execution.started" || e.type === "execution.resumed") {
        this.#ids = { executionId: e.executionId, rootExecutionId: e.rootExecutionId, threadId: e.threadId };
      }
      this.#push(e);
    };
    let started: Promise<ExecutionOutput<TOutput>>;
    try {
      started = run(listen);
    } catch (error) {
      started = Promise.reject(error);
    }
    this.result = started.then(
      (output) => {
        this.#push({
          ...this.#ids,
          at: now(),
          type: output.status === ExecutionStatus.Paused ? "execution.paused" : "execution.finished",
          output,
        });
        this.#end(undefined);
        return output;
      },
      (error: unknown) => {
        this.#push({
          ...this.#ids,
          at: now(),
          type: "execution.failed",
          error: streamErrorOf(error),
        });
        this.#end({ error });
        throw error;
      },
    );
    // Read through the loop or through `result`: a failure read either way is not an unhandled rejection.
    this.result.catch(() => undefined);
  }

  #push(event: ExecutionStreamEvent<TOutput>): void {
    if (this.#ended || this.#left) return;
    this.#queue.push(event);
    this.#wake?.();
  }

  /** The next unread event, if any; the read part of the queue is dropped now and then. */
  #next(): ExecutionStreamEvent<TOutput> | undefined {
    if (this.#head >= this.#queue.length) return undefined;
    const event = this.#queue[this.#head] as ExecutionStreamEvent<TOutput>;
    this.#head += 1;
    if (this.#head >= 1_024 && this.#head * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return event;
  }

  #end(error: { readonly error: unknown } | undefined): void {
    this.#ended = true;
    this.#error = error;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ExecutionStreamEvent<TOutput>> {
    if (this.#iterated) throw new TypeError("An ExecutionStream can be iterated once.");
    this.#iterated = true;
    try {
      for (;;) {
        const next = this.#next();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (this.#ended) {
          if (this.#error !== undefined) throw this.#error.error;
          return;
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
      }
    } finally {
      // Left early (a `break`, a throw in the loop's body): the run goes on, its events are not kept.
      this.#left = true;
      this.#queue = [];
      this.#head = 0;
    }
  }
}
