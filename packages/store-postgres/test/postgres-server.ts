import { randomBytes } from "node:crypto";
import net from "node:net";
import pg from "pg";

// Spelled out, not imported from the store: the global setup loads this file outside vite's resolution.
const POSTGRES_URL_ENV = "AGBOSS_POSTGRES_URL";

/** The server the tests run on: `AGBOSS_POSTGRES_URL`, else the local `test` database. */
export const TEST_URL = process.env[POSTGRES_URL_ENV] || "postgres://postgres@127.0.0.1:5432/test";

/**
 * What to do when the server cannot be reached, for every failure message of these tests. Without
 * `AGBOSS_POSTGRES_URL` the run's global setup (vitest.postgres.ts) uses the server answering on
 * 127.0.0.1:5432 or starts an embedded one, so this is a server that answered but refused, or a URL
 * that points nowhere.
 */
export const START_HINT =
  `Point ${POSTGRES_URL_ENV} at a server where the tests may create and drop schemas, or unset it: ` +
  "the run then uses the server on 127.0.0.1:5432 (its `test` database, user `postgres`) or, when " +
  "nothing answers there, starts a PostgreSQL of its own.";

/** The prefix of every schema this run creates; the global teardown drops whatever a test left. */
export const SCHEMA_PREFIX = `agboss_t_${process.env.AGBOSS_TEST_RUN ?? "local"}_`;

/** Runs `work` on one short-lived connection; fails with {@link START_HINT} when there is no server. */
export async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new Error(`Cannot reach PostgreSQL at ${TEST_URL}. ${START_HINT}`, { cause: error });
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A schema name no other test uses; the store creates it on open. */
export function uniqueSchema(): string {
  return `${SCHEMA_PREFIX}${randomBytes(6).toString("hex")}`;
}

/** Drops `schema` and everything in it. */
export function dropSchema(schema: string): Promise<void> {
  return withClient(async (client) => {
    await client.query(`drop schema if exists ${pg.escapeIdentifier(schema)} cascade`);
  });
}

/** Polls `probe` every 20 ms until it gives a value; fails naming `what` after 10 s. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A TCP proxy on loopback in front of the test server, standing in for what lies between a store and
 * its server (a network, a pooler): each connection made to `url` gets a connection of its own to the
 * server, and `relay` wires the two. `close` destroys every connection and stops listening.
 */
export async function proxyInFront(
  relay: (client: net.Socket, server: net.Socket) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(TEST_URL);
  const sockets = new Set<net.Socket>();
  const listener = net.createServer((client) => {
    const server = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    }
    relay(client, server);
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const url = new URL(TEST_URL);
  url.hostname = "127.0.0.1";
  url.port = String((listener.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
