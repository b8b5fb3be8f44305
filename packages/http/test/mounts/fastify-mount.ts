// Mounting the handler in Fastify (docs/webhooks.md): in a scope of its own, with Fastify's body
// parsers removed so the handler reads the raw body, and the reply hijacked for the handler to write.
import type { AddressInfo } from "node:net";
import type { App } from "@agboss/core";
import { createAgbossHttp, type HttpCaller } from "@agboss/http";
import { getRequestListener } from "@hono/node-server";
import Fastify from "fastify";

export async function serveWithFastify(app: App, authenticate: (request: Request) => HttpCaller | undefined) {
  const server = Fastify();
  const listener = getRequestListener(createAgbossHttp(app, { authenticate, basePath: "/agboss" }).fetch);
  await server.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null));
    scope.all("/agboss/*", async (request, reply) => {
      reply.hijack();
      await listener(request.raw, reply.raw);
    });
  });
  server.post("/orders", async (request) => ({ received: request.body })); // your own routes keep Fastify's parsers
  await server.listen({ port: 0, host: "127.0.0.1" });
  const { port } = server.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/agboss`, close: () => server.close() };
}
