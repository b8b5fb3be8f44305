// A Next.js route handler (docs/webhooks.md), as app/agboss/[...path]/route.ts: Next calls the exported
// functions with a web Request and sends the Response they return.

import type { App } from "@agboss/core";
import { createAgbossHttp, type HttpCaller } from "@agboss/http";

export function nextRouteHandlers(app: App, authenticate: (request: Request) => HttpCaller | undefined) {
  const http = createAgbossHttp(app, { authenticate, basePath: "/agboss" });
  const handle = (request: Request) => http.fetch(request);
  return { GET: handle, POST: handle };
}
