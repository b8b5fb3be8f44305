// The HTTP handler mounted in the application's own Hono app: one hono, the application's.
import type { App } from "@agboss/core";
import { createAgbossHttp } from "@agboss/http";
import { Hono } from "hono";

export function server(app: App): Hono {
  const root = new Hono();
  root.get("/health", (c) => c.text("ok"));
  root.route(
    "/agboss",
    createAgbossHttp(app, { authenticate: () => ({ tenantId: "default", ownerId: "customer-7" }) }),
  );
  return root;
}
