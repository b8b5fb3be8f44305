// A Next.js route handler (docs/webhooks.md), as app/agboss/[...path]/route.ts: Next calls the exported
// functions with a web Request and sends the Response they return. The app is created once per
// process (a module-level promise there; passed in here, so the test picks the store).
import type { App } from "@agboss/core";
import { createAgbossHttp, type HttpCaller } from "@agboss/http";

export function nextRouteHandlers(
  app: Promise<App>,
  authenticate: (request: Request) => HttpCaller | undefined,
) {
  const http = app.then((created) => createAgbossHttp(created, { authenticate, basePath: "/agboss" }));
  async function GET(request: Request): Promise<Response> {
    return (await http).fetch(request);
  }
  const POST = GET;
  return { GET, POST };
}
