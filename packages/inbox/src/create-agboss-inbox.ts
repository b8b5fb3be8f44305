import { type App, LogLevel } from "@agboss/core";
import { HttpError, problemOf, problemResponse } from "@agboss/http";
import { type Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { answerRoute } from "./answer-route.js";
import { auditRoute } from "./audit-route.js";
import { type CheckedCaller, checkCaller } from "./inbox-caller.js";
import { type InboxContext, inboxContext } from "./inbox-context.js";
import { InboxErrorCode, inboxError } from "./inbox-errors.js";
import type { AgbossInboxOptions } from "./inbox-options.js";
import { INBOX_REQUEST_HEADER } from "./inbox-types.js";
import { asset, PAGE_HEADERS, pageHtml } from "./page.js";
import { PauseWatch } from "./pause-watch.js";

/** How often an idle event stream sends a comment, so proxies keep it open. */
const KEEPALIVE_MS = 15_000;

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  });
}

/** Answers an error as a problem document; a 5xx is logged with what the response leaves out. */
function failure(context: InboxContext, c: Context, error: unknown): Response {
  const problem = problemOf(error);
  if (problem.status >= 500) {
    const { logger, clock } = context.internals;
    logger.log({
      level: LogLevel.Error,
      event: "inbox.request-failed",
      message: `${c.req.method} ${new URL(c.req.url).pathname} failed with ${problem.status} ${problem.code}: ${error instanceof Error ? error.message : String(error)}`,
      fields: { code: problem.code, status: problem.status },
      at: clock.now(),
    });
  }
  return problemResponse(
    error,
    problem.status === 401 ? { headers: { "www-authenticate": 'Bearer realm="agboss"' } } : {},
  );
}

/**
 * The inbox: a web page where people answer the pauses waiting for them, served by a Hono app you
 * mount at a path of your choosing (beside `createAgbossHttp`'s, with the same `authenticate`).
 *
 * The signed-in person sees, newest first, the pending pauses their threads ask them and those of the
 * roles they answer (`roles` in what `authenticate` returns); approves, rejects with a reason, overrides
 * the arguments, answers a question field by field, or replies in words for the role's interpreter;
 * and reads an execution's audit trail. Pauses asked, answered or withdrawn by any instance sharing the
 * store appear and disappear without a reload (server-sent events).
 *
 * | route | what it serves |
 * |---|---|
 * | `GET /` | the page (its files under `/assets/`) |
 * | `GET /api/pauses` | `{ pauses }`: the caller's pending pauses, newest first |
 * | `GET /api/events` | the event stream: `snapshot`, then `asked` and `closed` |
 * | `POST /api/pauses/{pauseId}/answer` | `{ decision }`, `{ answer }` or `{ reply }`; 200 once recorded |
 * | `GET /api/executions/{executionId}` | the audit trail of the tree whose root it is (a child's id: 404) |
 *
 * @example
 * const authenticate = async (request: Request) => {
 *   const user = await sessions.read(request.headers.get("cookie"));
 *   return user && { tenantId: user.tenantId, ownerId: user.id, answeredBy: user.id, roles: user.roles };
 * };
 * const server = new Hono();
 * server.route("/agboss", createAgbossHttp(app, { authenticate }));
 * server.route("/inbox", createAgbossInbox(app, { authenticate }));
 * serve({ fetch: server.fetch, port: 3000 });
 */
export function createAgbossInbox(app: App, options: AgbossInboxOptions): Hono {
  const context = inboxContext(app, options);
  const watch = new PauseWatch(context);
  const root = new Hono();
  const inbox = options.basePath === undefined ? root : root.basePath(options.basePath);

  const signedIn = async (c: Context): Promise<CheckedCaller> => {
    const found = await options.authenticate(c.req.raw);
    if (found === undefined) throw HttpError.unauthenticated("Sign in to see your inbox.");
    return checkCaller(found, context.channelRoles);
  };
  const guarded =
    (route: (c: Context, caller: CheckedCaller) => Promise<Response>) =>
    async (c: Context): Promise<Response> => {
      try {
        return await route(c, await signedIn(c));
      } catch (error) {
        return failure(context, c, error);
      }
    };

  const page = (c: Context, base: string) =>
    c.html(pageHtml({ title: context.title, base: options.publicPath ?? base }), 200, PAGE_HEADERS);
  inbox.get("/", (c) => {
    const path = new URL(c.req.url).pathname;
    return page(c, path.endsWith("/") ? path : `${path}/`);
  });
  inbox.get("/assets/:name", async (c) => {
    const found = asset(c.req.param("name"));
    if (found === undefined) return c.notFound();
    try {
      const file = await found;
      if (c.req.header("if-none-match") === file.etag) return c.body(null, 304, { etag: file.etag });
      return c.body(file.body as Uint8Array<ArrayBuffer>, 200, {
        "content-type": file.type,
        etag: file.etag,
        "cache-control": "no-cache",
        "x-content-type-options": "nosniff",
      });
    } catch (error) {
      return failure(context, c, error);
    }
  });
  inbox.get(
    "/api/pauses",
    guarded(async (_c, caller) => json({ pauses: await watch.list(caller) })),
  );
  inbox.post(
    "/api/pauses/:pauseId/answer",
    guarded(async (c, caller) => {
      if (c.req.header(INBOX_REQUEST_HEADER) === undefined) {
        throw inboxError(
          403,
          InboxErrorCode.NotFromPage,
          `Answers to the inbox carry the ${INBOX_REQUEST_HEADER} header; use @agboss/http's answer route from other clients.`,
        );
      }
      const outcome = await answerRoute(context, {
        request: c.req.raw,
        pauseId: c.req.param("pauseId") ?? "",
        caller,
      });
      watch.refresh(caller.tenantId);
      return json(outcome);
    }),
  );
  inbox.get(
    "/api/executions/:executionId",
    guarded(async (c, caller) =>
      json(await auditRoute(context, { executionId: c.req.param("executionId") ?? "", caller })),
    ),
  );
  inbox.get(
    "/api/events",
    guarded(async (c, caller) => {
      const first = await watch.list(caller);
      return streamSSE(c, async (stream) => {
        let lastWrite = Date.now();
        const queue: Promise<void>[] = [];
        const send = (event: string, data: unknown) => {
          lastWrite = Date.now();
          queue.push(stream.writeSSE({ event, data: JSON.stringify(data) }));
        };
        await stream.write("retry: 2000\n\n");
        send("snapshot", { pauses: first });
        const unsubscribe = watch.subscribe(caller, first, (event) => send(event.type, event.data));
        const closed = new Promise<void>((resolve) => stream.onAbort(resolve));
        while (!stream.aborted && !stream.closed) {
          await Promise.race([stream.sleep(KEEPALIVE_MS / 3), closed]);
          await Promise.all(queue.splice(0));
          if (Date.now() - lastWrite >= KEEPALIVE_MS) {
            lastWrite = Date.now();
            await stream.write(": keepalive\n\n");
          }
        }
        unsubscribe();
      });
    }),
  );
  // The mount path with a trailing slash (`/inbox/`) serves the page too; routers match it apart.
  inbox.get("/*", (c) => {
    const path = new URL(c.req.url).pathname;
    const mount = c.req.routePath.replace(/\/\*$/, "");
    return path === `${mount}/` ? page(c, path) : c.notFound();
  });
  return root;
}
