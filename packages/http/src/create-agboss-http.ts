import { type App, LogLevel } from "@agboss/core";
import { type Context, Hono } from "hono";
import type { AgbossHttpOptions } from "./agboss-http-options.js";
import { answerRoute } from "./answer-route.js";
import { followRoute } from "./follow-route.js";
import { checkCaller, type HttpCaller } from "./http-caller.js";
import { type HttpContext, httpContext } from "./http-context.js";
import { HttpError, HttpErrorCode } from "./http-error.js";
import { IDEMPOTENT_REPLAYED_HEADER } from "./idempotency.js";
import { inboxRoute } from "./inbox-route.js";
import { buildOpenApi } from "./openapi-document.js";
import { problemOf, problemResponse } from "./problem.js";
import { startRoute } from "./start-route.js";
import { cancelRoute, recordRoute } from "./thread-routes.js";

/** The routes' methods and paths, for 405 answers. */
const ROUTES: readonly (readonly [method: string, path: string])[] = [
  ["POST", "/starts/:start"],
  ["POST", "/pauses/:pauseId/answer"],
  ["GET", "/pauses"],
  ["POST", "/threads/:threadId/cancel"],
  ["GET", "/executions/:executionId"],
  ["GET", "/executions/:executionId/events"],
  ["GET", "/threads/:threadId/events"],
];

/** A path parameter, decoded. */
function param(c: Context, name: string): string {
  return c.req.param(name) ?? "";
}

function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

/** Answers an error as a problem document; a 5xx is logged with what the response leaves out. */
function failure(context: HttpContext, c: Context, error: unknown): Response {
  const problem = problemOf(error, { problemType: context.problemType });
  if (problem.status >= 500) {
    context.logger.log({
      level: LogLevel.Error,
      event: "http.request-failed",
      message: `${c.req.method} ${new URL(c.req.url).pathname} failed with ${problem.status} ${problem.code}: ${error instanceof Error ? error.message : String(error)}`,
      fields: {
        code: problem.code,
        status: problem.status,
        ...(error instanceof Error ? { error: error.name } : {}),
      },
      at: context.clock.now(),
    });
  }
  const headers: Record<string, string> = {};
  if (problem.code === HttpErrorCode.IdempotencyInProgress) headers["retry-after"] = "1";
  if (problem.status === 401) headers["www-authenticate"] = 'Bearer realm="agboss"';
  return problemResponse(error, { problemType: context.problemType, headers });
}

/**
 * AGBoss behind any HTTP server: a Hono app whose `fetch(request)` takes a standard `Request` and
 * returns a `Response`, so it runs on Node (`@hono/node-server`), in Next.js route handlers, on Bun and
 * Deno, and inside Express or Fastify. Create it once per process, beside the app.
 *
 * | route | what it does |
 * |---|---|
 * | `POST /starts/{start}` | starts an execution: 202 with its pending pauses, 200 when it ended; its events as server-sent events with `Accept: text/event-stream` |
 * | `POST /pauses/{pauseId}/answer` | answers a pause: 200 with the outcome, or `already_resolved`; the events from the answer on with `Accept: text/event-stream` |
 * | `GET /pauses` | the pauses of the caller's threads (its inbox) |
 * | `POST /threads/{threadId}/cancel` | cancels the caller's thread |
 * | `GET /executions/{executionId}` | an execution's record, with its audit trail |
 * | `GET /executions/{executionId}/events` | follows an execution another request runs, as server-sent events |
 * | `GET /threads/{threadId}/events` | follows the thread's latest execution, as server-sent events |
 * | `GET /openapi.json` | the OpenAPI 3.1 document of these routes |
 *
 * Errors are RFC 9457 problem documents carrying the AGBoss error code.
 *
 * @example
 * const app = await createApp(RefundApplication, { store: sqliteStore({ path }) });
 * const http = createAgbossHttp(app, {
 *   authenticate: async (request) => {
 *     const user = await sessions.read(request.headers.get("authorization"));
 *     return user && { tenantId: user.tenantId, ownerId: user.id, answeredBy: user.id };
 *   },
 * });
 * serve({ fetch: http.fetch, port: 3000 }); // @hono/node-server
 */
export function createAgbossHttp(app: App, options: AgbossHttpOptions): Hono {
  const context = httpContext(app, options);
  const root = new Hono();
  const http = options.basePath === undefined ? root : root.basePath(options.basePath);

  const openApi = options.openApi === false ? undefined : (options.openApi ?? {});
  if (openApi !== undefined) {
    let document: Record<string, unknown> | undefined;
    http.get(openApi.path ?? "/openapi.json", () => {
      document ??= buildOpenApi(context);
      return jsonResponse(200, document);
    });
  }

  /** Runs a route for an authenticated caller; every error becomes a problem document. */
  const guarded =
    (route: (c: Context, caller: HttpCaller) => Promise<Response>) =>
    async (c: Context): Promise<Response> => {
      try {
        const found = await options.authenticate(c.req.raw);
        if (found === undefined) throw HttpError.unauthenticated();
        return await route(c, checkCaller(found));
      } catch (error) {
        return failure(context, c, error);
      }
    };

  http.post(
    "/starts/:start",
    guarded(async (c, caller) => {
      const reply = await startRoute(context, { request: c.req.raw, startName: param(c, "start"), caller });
      if (reply.events !== undefined) return reply.events;
      return jsonResponse(
        reply.status,
        reply.body,
        reply.replayed ? { [IDEMPOTENT_REPLAYED_HEADER]: "true" } : {},
      );
    }),
  );
  http.post(
    "/pauses/:pauseId/answer",
    guarded(async (c, caller) => {
      const reply = await answerRoute(context, { request: c.req.raw, pauseId: param(c, "pauseId"), caller });
      if (reply.events !== undefined) return reply.events;
      return jsonResponse(
        reply.status,
        reply.body,
        reply.preferenceApplied === undefined ? {} : { "preference-applied": reply.preferenceApplied },
      );
    }),
  );
  http.get(
    "/pauses",
    guarded(async (c, caller) =>
      jsonResponse(200, await inboxRoute(context, { url: new URL(c.req.url), caller })),
    ),
  );
  http.post(
    "/threads/:threadId/cancel",
    guarded(async (c, caller) =>
      jsonResponse(200, await cancelRoute(context, { threadId: param(c, "threadId"), caller })),
    ),
  );
  http.get(
    "/executions/:executionId",
    guarded(async (c, caller) =>
      jsonResponse(200, await recordRoute(context, { executionId: param(c, "executionId"), caller })),
    ),
  );
  http.get(
    "/executions/:executionId/events",
    guarded((c, caller) =>
      followRoute(context, {
        request: c.req.raw,
        caller,
        target: { executionId: param(c, "executionId") },
      }),
    ),
  );
  http.get(
    "/threads/:threadId/events",
    guarded((c, caller) =>
      followRoute(context, { request: c.req.raw, caller, target: { threadId: param(c, "threadId") } }),
    ),
  );
  // The other methods on these paths are 405; any other path is left to the router it is mounted in
  // (a 404 problem when this app is the server itself).
  for (const [method, path] of ROUTES) {
    http.all(path, (c) => {
      const error = new HttpError({
        status: 405,
        code: HttpErrorCode.MethodNotAllowed,
        message: `${c.req.method} is not served at ${new URL(c.req.url).pathname}; use ${method}.`,
      });
      const response = failure(context, c, error);
      response.headers.set("allow", method);
      return response;
    });
  }
  root.notFound((c) =>
    failure(
      context,
      c,
      new HttpError({
        status: 404,
        code: HttpErrorCode.RouteUnknown,
        message: `Nothing is served at ${new URL(c.req.url).pathname}.`,
      }),
    ),
  );
  return root;
}
