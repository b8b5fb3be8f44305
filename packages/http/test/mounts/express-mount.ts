// Mounting the handler in Express (docs/webhooks.md): Express strips the mount path, and the handler
// reads its own bodies, so it is mounted before any body parser.
import type { AddressInfo } from "node:net";
import type { App } from "@agboss/core";
import { createAgbossHttp, type HttpCaller } from "@agboss/http";
import { getRequestListener } from "@hono/node-server";
import express from "express";

export function serveWithExpress(app: App, authenticate: (request: Request) => HttpCaller | undefined) {
  const server = express();
  server.use("/agboss", getRequestListener(createAgbossHttp(app, { authenticate }).fetch));
  server.use(express.json()); // your own routes' body parser, after the mount
  server.post("/orders", (req, res) => {
    res.json({ received: req.body });
  });
  return new Promise<{ url: string; close(): Promise<void> }>((resolve) => {
    const listening = server.listen(0, "127.0.0.1", () => {
      const { port } = listening.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/agboss`,
        close: () => new Promise((done) => listening.close(() => done())),
      });
    });
  });
}
