import type { HttpCaller } from "@agboss/http";

/**
 * Who is signed in to the inbox, as the application's `authenticate` hook established it: an
 * {@link HttpCaller} (the same hook serves `createAgbossHttp`), plus the channel roles this person may
 * answer.
 *
 * - `ownerId`: the person's own questions, those their threads ask them (`PauseAnswerer.ThreadOwner`).
 * - `answeredBy` with `roles`: the pending pauses of those roles (`PauseAnswerer.Channel`), whoever's
 *   thread asked them. The inbox shows such a pause's id, the right to answer it, to these people only.
 */
export interface InboxCaller extends HttpCaller {
  /** The names of the channel roles (answered by `PauseAnswerer.Channel`) this person answers. */
  readonly roles?: readonly string[] | undefined;
}

/** Options of `createAgbossInbox`. */
export interface AgbossInboxOptions {
  /**
   * Who is signed in, from the request's headers (usually your session cookie): the same hook as
   * `createAgbossHttp`'s, optionally returning `roles`. Return `undefined` for a 401 (the page says to
   * sign in); throw `HttpError.forbidden(…)` for a 403.
   */
  authenticate(request: Request): InboxCaller | undefined | Promise<InboxCaller | undefined>;
  /**
   * How often each instance reads the store for pauses asked, answered or withdrawn elsewhere, in
   * milliseconds. Default 1000. One read per signed-in person per interval, shared by their open pages.
   */
  readonly pollIntervalMs?: number;
  /** The most pending pauses a page shows, newest first. Default 200. */
  readonly maxPauses?: number;
  /** The page's title. Default "Inbox · " and the application's name. */
  readonly title?: string;
  /** A path prefix for every route, when the handler is not mounted by your router. */
  readonly basePath?: string;
  /**
   * The path the browser reaches the page at, ending in `/`, when a framework strips the mount path
   * before the handler sees it (Express's `app.use("/inbox", …)`): `"/inbox/"`. Default: the path of
   * the page's request, which is right wherever the handler sees the whole path (Hono, Fastify, Next.js).
   */
  readonly publicPath?: string;
  /** The largest answer body accepted, in bytes. Default 64 KiB. */
  readonly maxBodyBytes?: number;
}
