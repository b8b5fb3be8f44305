import type { App, Clock, Logger } from "@agboss/core";
import { appInternals } from "@agboss/core/internal";
import type { AgbossHttpOptions } from "./agboss-http-options.js";
import { HttpError, HttpErrorCode } from "./http-error.js";
import { defaultProblemType } from "./problem.js";
import { DEFAULT_MAX_BODY_BYTES } from "./read-json-body.js";

/** @internal A start the handler serves, as the routes and the OpenAPI document need it. */
export interface ServedStart {
  readonly cls: Parameters<App["execute"]>[0];
  readonly name: string;
  readonly workflow: string;
  readonly input: Parameters<typeof import("@agboss/core").parseDto>[0];
}

/** @internal What every route reads: the app, the resolved options, the starts by name. */
export interface HttpContext {
  readonly app: App;
  readonly options: AgbossHttpOptions;
  readonly starts: ReadonlyMap<string, ServedStart>;
  readonly maxBodyBytes: number;
  readonly problemType: (code: string) => string;
  readonly logger: Logger;
  readonly clock: Clock;
  /** `followPollIntervalMs`, checked; undefined for `app.follow`'s default. */
  readonly followPollIntervalMs: number | undefined;
}

function badOption(message: string): HttpError {
  return new HttpError({
    status: 500,
    code: HttpErrorCode.BadOption,
    message: `createAgbossHttp: ${message}`,
  });
}

/** @internal */
export function httpContext(app: App, options: AgbossHttpOptions): HttpContext {
  const internals = appInternals(app);
  const starts = new Map<string, ServedStart>();
  for (const [cls, flow] of internals.assembled.flows) {
    if (options.starts !== undefined && !options.starts.includes(cls)) continue;
    starts.set(flow.start.name, {
      cls,
      name: flow.start.name,
      workflow: flow.workflow.name,
      input: flow.start.input,
    });
  }
  if (options.starts !== undefined && starts.size !== options.starts.length) {
    const unknown = options.starts.filter((cls) => !internals.assembled.flows.has(cls)).map((c) => c.name);
    throw badOption(
      `${unknown.join(", ")} start${unknown.length === 1 ? "s" : ""} no flow of ${app.name}; list the @WorkflowStart classes of its workflows in starts.`,
    );
  }
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1)
    throw badOption(`maxBodyBytes must be a positive whole number of bytes, not ${maxBodyBytes}.`);
  const followPollIntervalMs = options.followPollIntervalMs;
  if (
    followPollIntervalMs !== undefined &&
    !(
      typeof followPollIntervalMs === "number" &&
      Number.isFinite(followPollIntervalMs) &&
      followPollIntervalMs > 0
    )
  )
    throw badOption(
      `followPollIntervalMs must be a positive number of milliseconds, not ${followPollIntervalMs}.`,
    );
  return {
    app,
    followPollIntervalMs,
    options,
    starts,
    maxBodyBytes,
    problemType: options.problemType ?? defaultProblemType,
    logger: internals.logger,
    clock: internals.clock,
  };
}
