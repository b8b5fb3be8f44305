import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { InboxClosed, InboxPause } from "../src/index.js";
import {
  ask,
  call,
  type Instance,
  openTestStore,
  release,
  startInstance,
  type TestStore,
} from "./harness.js";

/** An open event stream, read as it arrives. */
interface Stream {
  next(event: string, where?: (data: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  close(): void;
}

async function events(base: string, who: string): Promise<Stream> {
  const abort = new AbortController();
  const res = await fetch(`${base}/inbox/api/events`, {
    headers: { cookie: `who=${who}` },
    signal: abort.signal,
  });
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const seen: { event: string; data: Record<string, unknown> }[] = [];
  let buffer = "";
  const waiters: (() => void)[] = [];
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event !== undefined && data !== undefined) seen.push({ event, data: JSON.parse(data) });
          for (const w of waiters.splice(0)) w();
          cut = buffer.indexOf("\n\n");
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    async next(event, where = () => true) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const index = seen.findIndex((e) => e.event === event && where(e.data));
        if (index >= 0) return seen.splice(index, 1)[0]!.data;
        if (Date.now() > deadline)
          throw new Error(`no ${event} event within 10 s; saw ${JSON.stringify(seen)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    close: () => abort.abort(),
  };
}

describe.each(["sqlite", "postgres"] as const)("live, on %s, across two instances", (kind) => {
  let store: TestStore;
  let a: Instance;
  let b: Instance;
  beforeAll(async () => {
    store = await openTestStore(kind);
    a = await startInstance(store);
    b = await startInstance(store);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await store?.dispose();
  });

  test("a pause asked on one appears on the other's stream; answered there, it closes with who and how", async () => {
    const stream = await events(b.url, "mia");
    expect(((await stream.next("snapshot")).pauses as InboxPause[]).length).toBe(0);
    await ask(a.app, "refund ord_9 1200", "refund:ord_9");
    const asked = (await stream.next("asked")).pause as InboxPause;
    expect(asked).toMatchObject({ tool: "refund-tool", arguments: { cardNumber: "***" } });
    const sent = await call(a.url, `/inbox/api/pauses/${asked.pauseId}/answer`, {
      as: "mia",
      body: { decision: { approved: true } },
    });
    expect(sent.body.outcome).toBe("recorded");
    const closed = (await stream.next("closed")) as unknown as InboxClosed;
    expect(closed).toMatchObject({ pauseId: asked.pauseId, resolution: "replied", by: "mia" });
    stream.close();
  });

  test("a question a quorum made obsolete is withdrawn live", async () => {
    const stream = await events(b.url, "dana");
    await stream.next("snapshot");
    await release(a.app, "v2.0", `release:${kind}`);
    const asked: InboxPause[] = [];
    for (let i = 0; i < 3; i++) asked.push((await stream.next("asked")).pause as InboxPause);
    expect(asked.map((p) => p.tool)).toEqual(["sign-off-tool", "sign-off-tool", "sign-off-tool"]);
    for (const pause of asked.slice(0, 2)) {
      await a.app.resume(
        { pauseId: pause.pauseId, decision: { approved: true } },
        { tenantId: "acme", ownerId: "dana" },
      );
    }
    const withdrawn = (await stream.next(
      "closed",
      (d) => d.pauseId === asked[2]?.pauseId,
    )) as unknown as InboxClosed;
    expect(withdrawn).toMatchObject({ status: "cancelled", resolution: "withdrawn" });
    stream.close();
  });
});
