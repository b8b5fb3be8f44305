import { createHmac, timingSafeEqual } from "node:crypto";
import { bytesOf } from "./bytes-of.js";
import { headerOf, type SlackRequestHeaders } from "./slack-request-headers.js";

/** How old a signed request may be, in seconds: Slack's advice, five minutes. */
export const SLACK_SIGNATURE_TOLERANCE_SECONDS = 300;

/** What {@link verifySlackSignature} checks. */
export interface SlackSignatureCheck {
  readonly signingSecret: string;
  /** The body exactly as it arrived, before any parsing. */
  readonly body: string | Uint8Array;
  readonly headers: SlackRequestHeaders;
  /** Now, in epoch milliseconds. Default `Date.now()`. */
  readonly now?: number;
  /** Default {@link SLACK_SIGNATURE_TOLERANCE_SECONDS}. */
  readonly toleranceSeconds?: number;
}

/** The verdict on a request's signature; `reason` says what was wrong, for the log (not for the caller). */
export type SlackSignatureVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

function signatureOf(signingSecret: string, timestamp: string, body: Buffer): string {
  const hmac = createHmac("sha256", signingSecret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(body);
  return `v0=${hmac.digest("hex")}`;
}

/**
 * Checks that a request comes from Slack: `X-Slack-Signature` must be `v0=` and the HMAC-SHA256 of
 * `v0:<X-Slack-Request-Timestamp>:<raw body>` under the app's signing secret (compared in constant
 * time), and the timestamp at most five minutes from now, so a recorded request cannot be replayed.
 */
export function verifySlackSignature(check: SlackSignatureCheck): SlackSignatureVerdict {
  const timestamp = headerOf(check.headers, "x-slack-request-timestamp");
  const signature = headerOf(check.headers, "x-slack-signature");
  if (timestamp === undefined || signature === undefined) {
    return { ok: false, reason: "the X-Slack-Request-Timestamp or X-Slack-Signature header is missing" };
  }
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "the timestamp is not a number of seconds" };
  const now = Math.floor((check.now ?? Date.now()) / 1000);
  const tolerance = check.toleranceSeconds ?? SLACK_SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    return {
      ok: false,
      reason: `the timestamp is more than ${tolerance} seconds from now (a replay, or a skewed clock)`,
    };
  }
  const expected = Buffer.from(signatureOf(check.signingSecret, timestamp, bytesOf(check.body)), "utf8");
  const given = Buffer.from(signature, "utf8");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: "the signature does not match the body" };
  }
  return { ok: true };
}

/**
 * The headers Slack would send with `body`: for tests of your own webhook, and for tools that replay
 * a request. `timestamp` is in seconds; default now.
 */
export function signSlackRequest(args: {
  readonly signingSecret: string;
  readonly body: string | Uint8Array;
  readonly timestamp?: number;
}): { "x-slack-request-timestamp": string; "x-slack-signature": string } {
  const timestamp = String(args.timestamp ?? Math.floor(Date.now() / 1000));
  return {
    "x-slack-request-timestamp": timestamp,
    "x-slack-signature": signatureOf(args.signingSecret, timestamp, bytesOf(args.body)),
  };
}
