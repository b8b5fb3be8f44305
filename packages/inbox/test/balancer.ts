import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";

/** A load balancer in front of the instances: each request goes to the next one, round robin. */
export interface Balancer {
  readonly url: string;
  /** How many requests each instance got. */
  readonly served: number[];
  close(): Promise<void>;
}

export async function balance(targets: readonly string[]): Promise<Balancer> {
  const served = targets.map(() => 0);
  let next = 0;
  const fetchVia = async (request: Request): Promise<Response> => {
    const index = next++ % targets.length;
    served[index] = (served[index] ?? 0) + 1;
    const url = new URL(request.url);
    const body =
      request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
    const headers = new Headers(request.headers);
    headers.delete("host");
    let response: Response;
    try {
      response = await fetch(`${targets[index]}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        ...(body === undefined ? {} : { body }),
        signal: request.signal,
        redirect: "manual",
      });
    } catch {
      return new Response(null, { status: 502 }); // the browser went away, or the instance did
    }
    const out = new Headers(response.headers);
    out.delete("content-encoding");
    out.delete("content-length");
    // A stream cut by either side ends quietly here, as a real balancer's would.
    const reader = response.body?.getReader();
    const relayed =
      reader &&
      new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const { value, done } = await reader.read();
            if (done) controller.close();
            else controller.enqueue(value);
          } catch {
            controller.close();
          }
        },
        cancel: (reason) => reader.cancel(reason).catch(() => undefined),
      });
    return new Response(relayed ?? null, { status: response.status, headers: out });
  };
  const { server, port } = await new Promise<{ server: Server; port: number }>((resolve) => {
    const s = serve({ fetch: fetchVia, port: 0, hostname: "127.0.0.1" }, (info: AddressInfo) =>
      resolve({ server: s as Server, port: info.port }),
    );
  });
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
