import type { ExecutionOutput, ExecutionStream, ExecutionStreamEvent } from "@agboss/core";
import { executionView } from "./execution-view.js";
import type { HttpContext } from "./http-context.js";
import { problemOf } from "./problem.js";

/** True when the request asks for the run's events as server-sent events (`Accept: text/event-stream`). */
export function wantsEventStream(request: Request): boolean {
  return (request.headers.get("accept") ?? "")
    .split(",")
    .some((type) => type.split(";")[0]?.trim().toLowerCase() === "text/event-stream");
}

/**
 * A streamed run as server-sent events: one `event: <type>` with its JSON per event, the run's rest
 * last (`execution.finished` / `execution.paused` with the execution as the JSON routes show it,
 * `execution.failed` with its problem document). A call refused before its run began rejects here, so
 * the route answers it as a problem document with its status. A client that goes away stops reading,
 * not the run.
 * @internal
 */
export async function eventStreamResponse(context: HttpContext, run: ExecutionStream): Promise<Response> {
  const events = run[Symbol.asyncIterator]();
  const first = await events.next().catch(() => undefined);
  if (first === undefined || first.done === true || first.value.type === "execution.failed") {
    // Nothing ran: the error is the route's to answer (a 400, a 404, a 409).
    await run.result;
  }
  const encoder = new TextEncoder();
  const encode = async (event: ExecutionStreamEvent) =>
    encoder.encode(`event: ${event.type}\ndata: ${JSON.stringify(await shown(context, run, event))}\n\n`);
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      if (first !== undefined && first.done !== true) controller.enqueue(await encode(first.value));
    },
    async pull(controller) {
      if (closed) return;
      try {
        const next = await events.next();
        if (next.done === true) {
          closed = true;
          controller.close();
          return;
        }
        controller.enqueue(await encode(next.value));
      } catch {
        // The run failed: its execution.failed event was the last one sent.
        closed = true;
        controller.close();
      }
    },
    cancel() {
      closed = true;
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
async function shown(
  context: HttpContext,
  run: ExecutionStream,
  event: ExecutionStreamEvent,
): Promise<unknown> {
  if (event.type === "execution.finished" || event.type === "execution.paused") {
    return { ...event, output: executionView(event.output as ExecutionOutput) };
  }
  if (event.type === "execution.failed") {
    const { error: _summary, ...rest } = event;
    const error = await run.result.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    return { ...rest, problem: problemOf(error, { problemType: context.problemType }) };
  }
  return event;
}
