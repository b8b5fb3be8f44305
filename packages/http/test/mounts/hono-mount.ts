// Mounting the handler in a Hono app of your own, served by @hono/node-server (docs/webhooks.md).
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { App } from "@agboss/core";
import { createAgbossHttp, type HttpCaller } from "@agboss/http";
import { serve } from "@hono/node-server";
import { Hono } from "hono";

export function serveWithHono(app: App, authenticate: (request: Request) => HttpCaller | undefined) {
  const server = new Hono();
  server.get("/health", (c) => c.text("ok"));
  server.route("/agboss", createAgbossHttp(app, { authenticate }));
  return new Promise<{ url: string; close(): Promise<void> }>((resolve) => {
    const listening: Server = serve(
      { fetch: server.fetch, port: 0, hostname: "127.0.0.1" },
      (info: AddressInfo) =>
        resolve({
          url: `http://127.0.0.1:${info.port}/agboss`,
          close: () => new Promise((done) => listening.close(() => done())),
        }),
    ) as Server;
  });
}
