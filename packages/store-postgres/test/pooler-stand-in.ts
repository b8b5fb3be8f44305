import net from "node:net";

/**
 * A stand-in for a connection pooler such as PgBouncer, in front of the test server: it passes each
 * client connection through to a server connection of its own, but announces a process id of its own
 * in the startup's BackendKeyData, as a pooler does (the id a client sees is not its server process's).
 * Like a pooler, it keeps the server connection open when its client goes away, until it closes.
 * Only for plain (non-TLS) connections, as the tests make.
 */
export interface PoolerStandIn {
  /** The test server's URL with the stand-in's address. */
  readonly url: string;
  close(): Promise<void>;
}

/** The process id the stand-in announces in place of the server's. */
const ANNOUNCED_OFFSET = 1 << 22;

export async function poolerStandIn(serverUrl: string): Promise<PoolerStandIn> {
  const target = new URL(serverUrl);
  const sockets = new Set<net.Socket>();
  const listener = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    const server = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(server);
    server.on("close", () => sockets.delete(server));
    server.on("error", () => client.destroy());
    client.on("error", () => undefined);
    client.pipe(server, { end: false });
    let startup = true;
    let pending = Buffer.alloc(0);
    server.on("data", (chunk: Buffer) => {
      if (!startup) {
        if (!client.destroyed) client.write(chunk);
        return;
      }
      // Until the first ReadyForQuery, read whole messages (a type byte, then a length that counts
      // itself) and rewrite the process id of BackendKeyData ('K').
      pending = Buffer.concat([pending, chunk]);
      while (startup && pending.length >= 5) {
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) break;
        const message = Buffer.from(pending.subarray(0, 1 + length));
        pending = pending.subarray(1 + length);
        if (message[0] === "K".charCodeAt(0))
          message.writeInt32BE(message.readInt32BE(5) + ANNOUNCED_OFFSET, 5);
        if (message[0] === "Z".charCodeAt(0)) startup = false;
        client.write(message);
      }
      if (!startup && pending.length > 0) {
        client.write(pending);
        pending = Buffer.alloc(0);
      }
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const { port } = listener.address() as net.AddressInfo;
  const url = new URL(serverUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
