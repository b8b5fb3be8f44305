import type { ExecutionFollow, ExecutionOutput, ExecutionStreamEvent } from "@agboss/core";
import { executionView } from "./execution-view.js";
import { type HttpCaller, ownerOf } from "./http-caller.js";
import type { HttpContext } from "./http-context.js";
import { HttpError, HttpErrorCode } from "./http-error.js";
import { problemOfStreamError } from "./problem.js";

/**
 * `GET /executions/{executionId}/events` and `GET /threads/{threadId}/events`: the events of an
 * execution that another request (or another instance) runs, as server-sent events, for the thread's
 * owner; another owner's, or another tenant's, is 404 as if it did not exist. The events are encoded as
 * a start's or an answer's stream encodes them; the stream ends after `execution.finished` or
 * `execution.failed` (at once for an execution that had ended). A client that goes away stops following,
 * never the run.
 * @internal
 */
export async function followRoute(
  context: HttpContext,
  args: {
    readonly request: Request;
    readonly caller: HttpCaller;
    readonly target: { readonly threadId: string } | { readonly executionId: string };
  },
): Promise<Response> {
  const { app } = context;
  const { caller, target, request } = args;
  const ownerId = ownerOf(caller, "follow executions");
  const { tenantId } = caller;
  if ("threadId" in target) {
    const thread = await app.store.threads.findByTenantIdAndThreadId(tenantId, target.threadId);
    if (thread === undefined || thread.ownerId !== ownerId) {
      throw new HttpError({
        status: 404,
        code: HttpErrorCode.ThreadUnknown,
        message: `No thread "${target.threadId}" of yours is known.`,
      });
    }
  } else {
    const stored = await app.store.executions.findByTenantIdAndExecutionId(tenantId, target.executionId);
    if (stored === undefined || ownerOfStored(stored) !== ownerId) {
      throw new HttpError({
        status: 404,
        code: HttpErrorCode.ExecutionUnknown,
        message: `No execution "${target.executionId}" of yours is known.`,
      });
    }
  }
  const stop = new AbortController();
  const follow = app.follow(target, {
    tenantId,
    signal: AbortSignal.any([stop.signal, request.signal]),
    ...(context.followPollIntervalMs === undefined ? {} : { pollIntervalMs: context.followPollIntervalMs }),
  });
  return followResponse(context, follow, stop);
}

/** The thread's owner, as an execution's record keeps it. */
function ownerOfStored(stored: { readonly record: unknown }): string | undefined {
  return (stored.record as { ownerId?: string } | undefined)?.ownerId;
}

/** A follow as server-sent events: one `event: <type>` with its JSON per event, as the run streams do. */
function followResponse(context: HttpContext, follow: ExecutionFollow, stop: AbortController): Response {
  const events = follow[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (closed) return;
      try {
        const next = await events.next();
        if (next.done === true) {
          closed = true;
          controller.close();
          return;
        }
        const event = next.value;
        controller.enqueue(
          encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(shown(context, event))}\n\n`),
        );
      } catch {
        // The thread or execution went away meanwhile, or the app closed: the stream ends.
        closed = true;
        controller.close();
      }
    },
    cancel() {
      // The client went away: stop following (the run goes on).
      closed = true;
      stop.abort();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}

/** An event as the client reads it: the rest's execution as the JSON routes show it, a failure as a problem. */
function shown(context: HttpContext, event: ExecutionStreamEvent): unknown {
  if (event.type === "execution.finished" || event.type === "execution.paused") {
    return { ...event, output: executionView(event.output as ExecutionOutput) };
  }
  if (event.type === "execution.failed") {
    const { error, ...rest } = event;
    return { ...rest, problem: problemOfStreamError(error, { problemType: context.problemType }) };
  }
  return event;
}
