import type { IncomingMessage, ServerResponse } from "node:http";
import type { SlackWebhook } from "./slack-webhook-types.js";

/** Options of {@link slackRequestListener}. */
export interface SlackRequestListenerOptions {
  /** The biggest body accepted, in bytes; larger ones get 413. Default 1 MiB (Slack's payloads are far smaller). */
  readonly maxBodyBytes?: number;
}

/**
 * A node:http request listener around a Slack webhook: reads the raw body, lets the webhook answer,
 * writes its response. Only POST is accepted. Route to it from your own server, or serve it alone.
 *
 * @example
 * const slack = slackRequestListener(createSlackWebhook(app));
 * createServer((req, res) => (req.url === "/slack" ? slack(req, res) : res.writeHead(404).end())).listen(3000);
 */
export function slackRequestListener(
  webhook: SlackWebhook,
  options: SlackRequestListenerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const max = options.maxBodyBytes ?? 1024 * 1024;
  return (req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on("data", (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > max) {
        refused = true;
        res.writeHead(413, { connection: "close" }).end();
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (refused) return;
      webhook.handle({ body: Buffer.concat(chunks), headers: req.headers }).then(
        (reply) => res.writeHead(reply.status, reply.headers).end(reply.body),
        () => res.writeHead(500).end(),
      );
    });
    req.on("error", () => {
      if (!res.headersSent) res.writeHead(400).end();
    });
  };
}
