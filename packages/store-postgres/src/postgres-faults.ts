import { StoreFault } from "@agboss/store-kysely";
import { isStalePreparedStatement } from "./prepared-statements.js";

/**
 * SQLSTATEs of a lost connection: `57P01` admin_shutdown (a terminated backend, a fast shutdown),
 * `57P02` crash_shutdown, `57P03` cannot_connect_now (starting up, shutting down), `25P03`
 * idle_in_transaction_session_timeout and `57P05` idle_session_timeout (the server ended the session
 * before the statement ran, its transaction rolled back); class `08` is checked apart (connection
 * exceptions).
 */
const CONNECTION_LOST_CODES = new Set(["57P01", "57P02", "57P03", "25P03", "57P05"]);
/**
 * SQLSTATEs after which the server has undone the transaction and running it again is safe: `40001`
 * serialization_failure, `40P01` deadlock_detected, `53300` too_many_connections (nothing ran).
 */
const CONTENTION_CODES = new Set(["40001", "40P01", "53300"]);
/** Socket errors of a connection that dropped or could not be made. */
const SOCKET_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);
/** pg's own errors for a connection that ended under a query, or for a client that lost its connection. */
const CONNECTION_LOST_MESSAGES = [
  /^Connection terminated( unexpectedly)?$/,
  /^Client has encountered a connection error and is not queryable$/,
];

/**
 * Which errors of `pg` (and of the server behind it) are transient, for the kysely store's retries.
 * Anything else, a constraint violation or an error of the store's own (`LeaseLostError`), is not.
 * A pool that times out waiting for a connection is not retried either: it has waited long already.
 */
export function postgresFaultOf(error: unknown): StoreFault | undefined {
  if (error instanceof AggregateError) {
    // Node reports a refused connection to every address of a host (IPv4 and IPv6) as one aggregate.
    const faults = error.errors.map(postgresFaultOf);
    return faults.length > 0 && faults.every((fault) => fault !== undefined) ? faults[0] : undefined;
  }
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (CONNECTION_LOST_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || SOCKET_CODES.has(code)) {
      return StoreFault.ConnectionLost;
    }
    if (CONTENTION_CODES.has(code)) return StoreFault.Contention;
    // A prepared statement a migration made stale: refused before it ran, and renamed for the next run.
    if (isStalePreparedStatement(error)) return StoreFault.Contention;
    // A prepared statement dropped under the store (`DISCARD ALL`): refused before it ran (and, in a
    // batch, everything after it), and every name of the connection given afresh for the next run.
    if (code === "26000") return StoreFault.Contention;
    return undefined;
  }
  const message = (error as { message?: unknown }).message;
  if (error instanceof Error && typeof message === "string") {
    if (CONNECTION_LOST_MESSAGES.some((pattern) => pattern.test(message))) return StoreFault.ConnectionLost;
  }
  return undefined;
}
