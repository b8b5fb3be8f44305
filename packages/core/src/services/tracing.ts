import type { ExecutionFrame } from "../container/execution-context.js";
import type { PauseRecord } from "../pauses/pause-record.js";
import { PauseAnswerer } from "../pauses/pause-status.js";

/** A span attribute's value, as OpenTelemetry takes it. */
type AttributeValue = string | number | boolean;
/** Span attributes; undefined values are left out. */
export type SpanAttributes = Readonly<Record<string, AttributeValue | undefined>>;

// The part of `@opentelemetry/api` AGBoss calls, typed here: core's types never name the package, so an
// application without it compiles and runs without it.
interface OtelSpan {
  isRecording(): boolean;
  setAttributes(attributes: Record<string, AttributeValue>): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}
interface OtelTracer {
  startSpan(
    name: string,
    options: { attributes: Record<string, AttributeValue> },
    context: unknown,
  ): OtelSpan;
}
interface OtelApi {
  readonly trace: {
    getTracer(name: string, version?: string): OtelTracer;
    setSpan(context: unknown, span: OtelSpan): unknown;
  };
  readonly context: { active(): unknown; with<T>(context: unknown, fn: () => T): T };
}

/** OpenTelemetry's status code for a span that failed. */
const STATUS_ERROR = 2;

/** The name spans are reported under (the instrumentation scope). */
const SCOPE = "@agboss/core";

/**
 * One span of a run: an execution's pass, a step, a model call, a tool call, a pause's ask, answer or
 * withdrawal. Ended once, failed or not.
 * @internal
 */
export class TraceSpan {
  /** A span of nothing: what a step of a run nobody records gets, at no cost. */
  static readonly quiet = new TraceSpan(undefined, undefined);

  readonly #api: OtelApi | undefined;
  readonly #span: OtelSpan | undefined;
  /** Whether the span is recorded (sampled, with a provider registered); its children only then. */
  readonly recording: boolean;
  #ended = false;

  constructor(api: OtelApi | undefined, span: OtelSpan | undefined) {
    this.#api = api;
    this.#span = span;
    this.recording = span?.isRecording() === true;
  }

  /** Adds attributes (ids, counts, statuses: never values a person or a tool gave). */
  set(attributes: SpanAttributes): void {
    if (this.recording) this.#span?.setAttributes(defined(attributes));
  }

  /** Runs `fn` with this span active, so spans of other instrumentation (HTTP, a database) nest under it. */
  run<T>(fn: () => T): T {
    const api = this.#api;
    const span = this.#span;
    if (api === undefined || span === undefined || !this.recording) return fn();
    return api.context.with(api.trace.setSpan(api.context.active(), span), fn);
  }

  /** The OpenTelemetry context with this span active, for children. */
  context(): unknown {
    const api = this.#api;
    if (api === undefined || this.#span === undefined) return undefined;
    return api.trace.setSpan(api.context.active(), this.#span);
  }

  /** Ends the span; with an error, marks it failed by the error's name and code (never its message). */
  end(error?: unknown): void {
    if (this.#ended || this.#span === undefined) return;
    this.#ended = true;
    if (error !== undefined && this.recording) {
      const name = error instanceof Error ? error.name : "Error";
      const code = (error as { code?: unknown } | null)?.code;
      this.#span.setAttributes(
        defined({ "error.type": name, "agboss.error.code": typeof code === "string" ? code : undefined }),
      );
      this.#span.setStatus({ code: STATUS_ERROR, message: typeof code === "string" ? code : name });
    }
    this.#span.end();
  }
}

/**
 * The application's tracer when `@opentelemetry/api` is installed: spans go to whatever tracer provider
 * the process registers (none: OpenTelemetry's no-op). Undefined when the package is absent: then no
 * span is ever built.
 * @internal
 */
export class Tracing {
  readonly #api: OtelApi;
  readonly #tracer: OtelTracer;

  constructor(api: OtelApi) {
    this.#api = api;
    this.#tracer = api.trace.getTracer(SCOPE);
  }

  /**
   * Starts a span under `parent`, or under the active OpenTelemetry context when there is none. Under a
   * parent nobody records, nothing is started (and `attributes` is not called): its children would not
   * be recorded either.
   */
  start(name: string, attributes: () => SpanAttributes, parent?: TraceSpan): TraceSpan {
    if (parent !== undefined && !parent.recording) return TraceSpan.quiet;
    const context = parent === undefined ? this.#api.context.active() : parent.context();
    return new TraceSpan(
      this.#api,
      this.#tracer.startSpan(name, { attributes: defined(attributes()) }, context),
    );
  }
}

/** Loads `@opentelemetry/api` if the application has it installed. @internal */
export async function loadTracing(): Promise<Tracing | undefined> {
  // A specifier in a variable: bundlers and the compiler leave the optional package alone.
  const specifier = "@opentelemetry/api";
  try {
    const api = (await import(specifier)) as Partial<OtelApi> & { default?: Partial<OtelApi> };
    const otel = api.trace !== undefined ? api : api.default;
    return otel?.trace === undefined || otel.context === undefined ? undefined : new Tracing(otel as OtelApi);
  } catch {
    return undefined;
  }
}

/** The span a frame's steps nest under, when the run is traced. @internal */
export function spanOf(frame: ExecutionFrame | undefined): TraceSpan | undefined {
  const span = frame?.traceSpan;
  return span instanceof TraceSpan ? span : undefined;
}

/**
 * Runs `work` in a span of its own under the frame's span: the span ends when `work` settles, failed
 * when it throws. Without tracing, `work` runs alone.
 * @internal
 */
export async function traced<T>(
  tracing: Tracing | undefined,
  parent: TraceSpan | undefined,
  span: { readonly name: string; readonly attributes: () => SpanAttributes },
  work: (span: TraceSpan | undefined) => Promise<T>,
): Promise<T> {
  if (tracing === undefined || parent?.recording === false) return work(undefined);
  const started = tracing.start(span.name, span.attributes, parent);
  try {
    const result = await started.run(() => work(started));
    started.end();
    return result;
  } catch (error) {
    started.end(error);
    throw error;
  }
}

function defined(attributes: SpanAttributes): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

/** The AGBoss ids of a frame, as span attributes. @internal */
export function frameAttributes(frame: ExecutionFrame | undefined): SpanAttributes {
  if (frame === undefined) return {};
  return {
    "agboss.tenant_id": frame.tenant.tenantId,
    "agboss.thread_id": frame.threadId,
    "agboss.execution_id": frame.executionId,
    "agboss.root_execution_id": frame.rootExecutionId,
    "agboss.workflow": frame.workflow.name,
  };
}

/**
 * A pause's ids, as span attributes. A pause a channel answers is named without its id: the id is what
 * lets its answer in. @internal
 */
export function pauseAttributes(pause: PauseRecord): SpanAttributes {
  return {
    "agboss.pause_id": pause.answeredBy === PauseAnswerer.ThreadOwner ? pause.pauseId : undefined,
    "agboss.pause.answered_by": pause.answeredBy,
    "agboss.channel": pause.channel,
    "agboss.tenant_id": pause.tenantId,
    "agboss.thread_id": pause.threadId,
    "agboss.execution_id": pause.executionId,
    "agboss.root_execution_id": pause.rootExecutionId,
  };
}
