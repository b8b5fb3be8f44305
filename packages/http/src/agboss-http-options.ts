import type { AnyClass } from "@agboss/core";
import type { HttpCaller } from "./http-caller.js";

/** The OpenAPI document's own fields. */
export interface OpenApiOptions {
  /** Where the document is served, relative to the handler's routes. Default `/openapi.json`. */
  readonly path?: string;
  /** `info.title`; default the application's name. */
  readonly title?: string;
  /** `info.version`; default `0.0.0`. */
  readonly version?: string;
  /** `servers`, e.g. `[{ url: "https://api.example.com/agboss" }]`. */
  readonly servers?: readonly { readonly url: string; readonly description?: string }[];
  /** `components.securitySchemes`, applied to every route but the document itself. */
  readonly securitySchemes?: Readonly<Record<string, unknown>>;
}

/** Options of `createAgbossHttp`. */
export interface AgbossHttpOptions {
  /**
   * Who is calling, from the request's headers (a session cookie, a bearer token, a verified
   * signature). Return `undefined` to answer 401; throw `HttpError.forbidden(…)` (or any `HttpError`)
   * to refuse with that status. Runs before the body is read; the request's body is the handler's.
   */
  authenticate(request: Request): HttpCaller | undefined | Promise<HttpCaller | undefined>;
  /**
   * The workflow starts served by `POST /starts/{start}`, by the start's name. Default: every start of
   * the application.
   */
  readonly starts?: readonly AnyClass[];
  /**
   * The thread a start without a `threadId` in its body runs on, from its validated input, e.g.
   * `({ input }) => \`order:${input.orderId}\``. Default: a new random thread.
   */
  threadId?(args: {
    readonly start: string;
    readonly input: unknown;
    readonly caller: HttpCaller;
  }): string | undefined;
  /** The largest body accepted, in bytes (a bigger one is 413). Default 64 KiB. */
  readonly maxBodyBytes?: number;
  /** A path prefix for every route, e.g. `/agboss` when the handler is not mounted by your router. */
  readonly basePath?: string;
  /** The OpenAPI document; `false` serves none. */
  readonly openApi?: OpenApiOptions | false;
  /**
   * How often a follow (`GET /executions/{executionId}/events`, `GET /threads/{threadId}/events`) reads
   * the store for what other instances did, in milliseconds. Default 1000 (`app.follow`'s default).
   */
  readonly followPollIntervalMs?: number;
  /** The `type` of problem documents for a code. Default: the error codes' page of the documentation. */
  problemType?(code: string): string;
}
