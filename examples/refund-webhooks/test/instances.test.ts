import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RefundServer, startRefundServer } from "../src/server.js";
import { DEFAULT_POSTGRES_SCHEMA, describeStore, storeChoiceFromEnv } from "../src/store.js";
import { answerPause, cancelOrder, outbox, refunds, requestRefund, startChild, TOKENS } from "./http.js";
import {
  openTestStore,
  POSTGRES_TEST_URL,
  postgresTestStore,
  STORE_KINDS,
  type TestStore,
} from "./stores.js";

const scriptedEnv = {}; // no key: scripted models, no network

/** A manager answers "lgtm", as the manager whose token is given. */
function approve(base: string, pauseId: string, token: string = TOKENS.manager) {
  return answerPause(base, pauseId, { reply: "lgtm" }, token);
}

async function pauseIdFor(url: string, threadId: string): Promise<string> {
  const message = (await outbox(url)).find((m) => m.threadId === threadId);
  expect(message, `no question for ${threadId} in the outbox of ${url}`).toBeDefined();
  return (message as NonNullable<typeof message>).pauseId;
}

/** The refunds for `orderId` the card processors of all `servers` were asked for. */
async function refundsOf(servers: readonly RefundServer[], orderId: string) {
  const all = await Promise.all(servers.map((s) => refunds(s.url)));
  return all.flat().filter((r) => r.orderId === orderId);
}

// Two instances, as two pods behind a load balancer would be: each its own app, port, outbox and card
// processor stand-in; only the store is shared.
describe.each(STORE_KINDS)("two instances over one %s store", (kind) => {
  let store: TestStore;
  let a: RefundServer;
  let b: RefundServer;

  beforeAll(async () => {
    store = await openTestStore(kind);
    a = await startRefundServer({ store: store.choice, port: 0, env: scriptedEnv });
    b = await startRefundServer({ store: store.choice, port: 0, env: scriptedEnv });
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await store?.dispose();
  });

  test("a refund requested on A is answered through B's webhook, runs once (on B), and a repeat on A is already resolved", async () => {
    expect(a.url).not.toBe(b.url);
    expect(a.store).toBe(b.store);

    const started = await requestRefund(a.url, "ord_7001");
    expect(started).toMatchObject({
      status: 202,
      body: { status: "paused", threadId: "order:ord_7001", pending: [{ kind: "approval" }] },
    });
    // The question was posted by A; B's outbox (its own process's) never saw it, but B's store has the pause.
    const pauseId = await pauseIdFor(a.url, "order:ord_7001");
    expect(await outbox(b.url)).toEqual([]);
    const pending = await b.app.pauses.list({ tenantId: "acme", threadId: "order:ord_7001" });
    expect(pending.map((p) => p.status)).toEqual(["pending"]);

    const answered = await approve(b.url, pauseId);
    expect(answered).toMatchObject({
      status: 200,
      body: {
        outcome: "answered",
        execution: {
          status: "completed",
          threadId: "order:ord_7001",
          output: { text: "Done: refunded 25.00 (rf_acme_ord_7001)." },
        },
      },
    });
    expect(await refunds(a.url)).toEqual([]);
    expect(await refunds(b.url)).toMatchObject([
      { refundId: "rf_acme_ord_7001", orderId: "ord_7001", amountCents: 2500 },
    ]);

    const repeated = await approve(a.url, pauseId, TOKENS.otherManager);
    expect(repeated.status).toBe(200);
    expect(repeated.body).toMatchObject({
      outcome: "already_resolved",
      resolution: "replied",
      by: "manager-17",
    });
    expect(await refundsOf([a, b], "ord_7001")).toHaveLength(1);
    const [taken] = await a.app.pauses.list({ tenantId: "acme", threadId: "order:ord_7001" });
    expect(taken).toMatchObject({ status: "taken", resolution: "replied" });
  });

  test("an order waiting on A is busy on B too; B cancels it, and A then answers already resolved", async () => {
    expect((await requestRefund(a.url, "ord_7002")).status).toBe(202);
    const pauseId = await pauseIdFor(a.url, "order:ord_7002");
    const busy = await requestRefund(b.url, "ord_7002");
    expect(busy.status).toBe(409);

    const cancelled = await cancelOrder(b.url, "ord_7002");
    expect(cancelled).toMatchObject({
      status: 200,
      body: { status: "cancelled", threadId: "order:ord_7002" },
    });
    const late = await approve(a.url, pauseId);
    expect(late.body).toMatchObject({ outcome: "already_resolved", resolution: "cancelled" });
    expect(await refundsOf([a, b], "ord_7002")).toEqual([]);
    // B's channel withdrew the question, in B's outbox: A's in-memory outbox still shows it open. A
    // shared outside system (a Slack channel) would have been updated whichever instance withdrew it.
    expect((await outbox(a.url)).find((m) => m.threadId === "order:ord_7002")?.state).toBe("open");
  });

  test("two answers racing through A and B at once: one completes, the other is already resolved, one refund", async () => {
    expect((await requestRefund(b.url, "ord_7003")).status).toBe(202);
    const pauseId = await pauseIdFor(b.url, "order:ord_7003");

    const [viaA, viaB] = await Promise.all([
      approve(a.url, pauseId, TOKENS.manager),
      approve(b.url, pauseId, TOKENS.otherManager),
    ]);
    expect([viaA.status, viaB.status]).toEqual([200, 200]);
    const outcomes = [viaA.body.outcome, viaB.body.outcome];
    expect(outcomes.toSorted()).toEqual(["already_resolved", "answered"]);
    const [winner, winnerServer, loser] =
      viaA.body.outcome === "answered" ? ([viaA, a, viaB] as const) : ([viaB, b, viaA] as const);
    expect(winner.body).toMatchObject({
      execution: { output: { text: "Done: refunded 25.00 (rf_acme_ord_7003)." } },
    });
    expect(loser.body).toMatchObject({
      resolution: "replied",
      by: winnerServer === a ? "manager-17" : "manager-99",
    });

    // The refund ran once, on the instance whose answer was recorded.
    expect(await refundsOf([a, b], "ord_7003")).toHaveLength(1);
    expect(await refundsOf([winnerServer], "ord_7003")).toHaveLength(1);
  });
});

describe("choosing the store", () => {
  test("AGBOSS_POSTGRES_URL picks Postgres (schema AGBOSS_POSTGRES_SCHEMA); otherwise SQLite", () => {
    const fallback = "/srv/desk/refund-webhooks.sqlite";
    expect(storeChoiceFromEnv({}, fallback)).toEqual({ kind: "sqlite", path: fallback });
    expect(storeChoiceFromEnv({ AGBOSS_SQLITE_PATH: "/data/desk.sqlite" }, fallback)).toEqual({
      kind: "sqlite",
      path: "/data/desk.sqlite",
    });
    const url = "postgres://desk@db.internal:5432/shop";
    expect(storeChoiceFromEnv({ AGBOSS_POSTGRES_URL: url, AGBOSS_SQLITE_PATH: "/data/x" }, fallback)).toEqual(
      {
        kind: "postgres",
        url,
        schema: DEFAULT_POSTGRES_SCHEMA,
      },
    );
    expect(
      storeChoiceFromEnv({ AGBOSS_POSTGRES_URL: url, AGBOSS_POSTGRES_SCHEMA: "desk_eu" }, fallback),
    ).toEqual({ kind: "postgres", url, schema: "desk_eu" });
    // Empty counts as unset.
    expect(storeChoiceFromEnv({ AGBOSS_POSTGRES_URL: "", AGBOSS_SQLITE_PATH: "" }, fallback)).toEqual({
      kind: "sqlite",
      path: fallback,
    });
  });

  test("the store is described without a password", () => {
    expect(describeStore({ kind: "sqlite", path: "/data/desk.sqlite" })).toBe("sqlite /data/desk.sqlite");
    const described = describeStore({
      kind: "postgres",
      url: "postgres://desk:s3cret@db.internal:5432/shop?sslmode=require&password=s3cret",
      schema: "desk_eu",
    });
    expect(described).toBe("postgres postgres://desk@db.internal:5432/shop, schema desk_eu");
    expect(
      describeStore({
        kind: "postgres",
        url: "host=db.internal user=desk password=s3cret dbname=shop",
        schema: "desk_eu",
      }),
    ).toBe("postgres (the server named by AGBOSS_POSTGRES_URL), schema desk_eu");
  });

  test("pnpm start on AGBOSS_POSTGRES_URL: the process says which store it uses, and an instance of its own answers its pause", async () => {
    const store = await postgresTestStore();
    const { choice } = store;
    if (choice.kind !== "postgres") throw new Error("expected a Postgres store");
    let other: RefundServer | undefined;
    try {
      const child = await startChild({
        AGBOSS_POSTGRES_URL: choice.url,
        AGBOSS_POSTGRES_SCHEMA: choice.schema,
      });
      let pauseId: string;
      try {
        // The banner's lines may reach this process a moment after the one with the URL.
        await expect.poll(() => child.output()).toContain(`GET  ${child.url}/refunds`);
        expect(child.output()).toContain(`store     ${describeStore(choice)}`);
        const password = new URL(POSTGRES_TEST_URL).password;
        if (password !== "") expect(child.output()).not.toContain(password);
        expect((await requestRefund(child.url, "ord_7101")).status).toBe(202);
        pauseId = await pauseIdFor(child.url, "order:ord_7101");
      } finally {
        expect(await child.stop()).toBe(0);
      }

      other = await startRefundServer({ store: choice, port: 0, env: scriptedEnv });
      const answered = await approve(other.url, pauseId);
      expect(answered.body).toMatchObject({
        execution: { status: "completed", output: { text: "Done: refunded 25.00 (rf_acme_ord_7101)." } },
      });
    } finally {
      await other?.close();
      await store.dispose();
    }
  }, 90_000);
});
