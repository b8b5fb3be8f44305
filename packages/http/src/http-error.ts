import { AgbossError } from "@agboss/core";

/** The stable codes of the errors `@agboss/http` answers with, beside core's `ErrorCode`. */
export const HttpErrorCode = {
  /** `authenticate` recognised no caller: 401. */
  Unauthenticated: "http.unauthenticated",
  /** The caller may not do this: 403. */
  Forbidden: "http.forbidden",
  /** No route for this path: 404. */
  RouteUnknown: "http.route-unknown",
  /** The route exists, not for this method: 405. */
  MethodNotAllowed: "http.method-not-allowed",
  /** The body is larger than `maxBodyBytes`: 413. */
  BodyTooLarge: "http.body-too-large",
  /** The body is not JSON, or not UTF-8: 400. */
  BodyUnreadable: "http.body-unreadable",
  /** The body is declared as something other than JSON: 415. */
  UnsupportedMediaType: "http.unsupported-media-type",
  /** No execution with this id for this caller: 404. */
  ExecutionUnknown: "execution.unknown",
  /** No thread with this id for this caller: 404. */
  ThreadUnknown: "thread.unknown",
  /** A start with this `Idempotency-Key` is still running: 409, retry later. */
  IdempotencyInProgress: "idempotency.in-progress",
  /** This `Idempotency-Key` already started an execution with another input: 422. */
  IdempotencyKeyReused: "idempotency.key-reused",
  /** `authenticate` returned something that is not a caller: 500, a bug in the application. */
  CallerInvalid: "http.caller-invalid",
  /** `createAgbossHttp` was given options that cannot work; thrown when it is called. */
  BadOption: "http.bad-option",
  /** An error that is not an AGBoss error: 500, with no detail. */
  Internal: "http.internal",
} as const;

/** One of the codes in {@link HttpErrorCode}. */
export type HttpErrorCode = (typeof HttpErrorCode)[keyof typeof HttpErrorCode];

/**
 * An error with the HTTP status it is answered with. Throw one from `authenticate` to refuse a request
 * with your own status and message; the handler answers it as a problem document.
 *
 * @example
 * authenticate(request) {
 *   const session = sessions.get(request.headers.get("authorization"));
 *   if (session === undefined) return undefined; // 401
 *   if (session.suspended) throw HttpError.forbidden("This account is suspended.");
 *   return { tenantId: session.tenantId, ownerId: session.userId };
 * }
 */
export class HttpError extends AgbossError {
  static override readonly kind: string = "HttpError";
  /** The HTTP status the handler answers with. */
  readonly status: number;
  /** Extra members of the problem document. */
  readonly extensions: Readonly<Record<string, unknown>>;

  constructor(args: {
    status: number;
    code: string;
    message: string;
    extensions?: Record<string, unknown>;
    cause?: unknown;
  }) {
    super(args.code, args.message, { cause: args.cause });
    this.status = args.status;
    this.extensions = Object.freeze({ ...(args.extensions ?? {}) });
  }

  /** 401: who is calling is not known; send credentials. */
  static unauthenticated(message = "Send credentials this server accepts."): HttpError {
    return new HttpError({ status: 401, code: HttpErrorCode.Unauthenticated, message });
  }

  /** 403: the caller is known and may not do this. */
  static forbidden(message: string): HttpError {
    return new HttpError({ status: 403, code: HttpErrorCode.Forbidden, message });
  }
}
