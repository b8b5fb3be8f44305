import { proxyInFront } from "./postgres-server.js";

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

export function poolerStandIn(): Promise<PoolerStandIn> {
  return proxyInFront((client, server) => {
    server.on("error", () => client.destroy());
    client.on("error", () => undefined);
    // Like a pooler, the server connection stays when its client goes.
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
}
