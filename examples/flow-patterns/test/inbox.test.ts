import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type InboxServer, serveInbox } from "../src/inbox/inbox-server.js";

const dir = mkdtempSync(join(tmpdir(), "agboss-example-inbox-"));
let first: InboxServer;
let second: InboxServer;

beforeAll(async () => {
  // The page's files, as the example's script builds them before it serves.
  const inbox = dirname(createRequire(import.meta.url).resolve("@agboss/inbox/package.json"));
  execFileSync(process.execPath, [join(inbox, "scripts", "build-client.mjs")]);
  first = await serveInbox({ path: join(dir, "inbox.sqlite"), port: 0, fresh: true });
  second = await serveInbox({ path: join(dir, "inbox.sqlite"), port: 0, fresh: false });
});
afterAll(async () => {
  await first?.close();
  await second?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the example's inbox", () => {
  test("signs dana in and serves the page", async () => {
    const signIn = await fetch(`${first.url}/sign-in/dana`, { redirect: "manual" });
    expect(signIn.status).toBe(302);
    expect(signIn.headers.get("set-cookie")).toContain("who=dana");
    const page = await fetch(`${first.url}/inbox/`);
    expect(await page.text()).toContain('<script type="module" src="assets/inbox.js">');
    expect((await fetch(`${first.url}/inbox/assets/inbox.js`)).status).toBe(200);
  });

  test("lists dana's seven questions on either instance, and an answer on one leaves both lists", async () => {
    const list = async (server: InboxServer) => {
      const res = await fetch(`${server.url}/inbox/api/pauses`, { headers: { cookie: "who=dana" } });
      return (
        (await res.json()) as {
          pauses: { pauseId: string; tool: string; arguments: Record<string, unknown> }[];
        }
      ).pauses;
    };
    const pauses = await list(second);
    expect(pauses.map((p) => p.tool).sort()).toEqual([
      "book-pickup-tool",
      "damage-refund-tool",
      "expense-tool",
      "refund-tool",
      "sign-off-tool",
      "sign-off-tool",
      "sign-off-tool",
    ]);
    const pickup = pauses.find((p) => p.tool === "book-pickup-tool");
    const friday = await fetch(`${second.url}/inbox/api/pauses/${pickup?.pauseId}/answer`, {
      method: "POST",
      headers: { cookie: "who=dana", "content-type": "application/json", "x-agboss-inbox": "1" },
      body: JSON.stringify({ answer: { day: "friday", window: "afternoon" } }),
    });
    expect(friday.status).toBe(400);
    expect(((await friday.json()) as { issues: { path: string }[] }).issues.map((i) => i.path)).toEqual([
      "window",
    ]);
    const refund = pauses.find((p) => p.tool === "refund-tool");
    expect(refund?.arguments.cardNumber).toBe("***");
    const answered = await fetch(`${first.url}/inbox/api/pauses/${refund?.pauseId}/answer`, {
      method: "POST",
      headers: { cookie: "who=dana", "content-type": "application/json", "x-agboss-inbox": "1" },
      body: JSON.stringify({ decision: { approved: true } }),
    });
    expect(((await answered.json()) as { outcome: string }).outcome).toBe("recorded");
    expect((await list(second)).map((p) => p.tool)).not.toContain("refund-tool");
    expect(await list(first)).toHaveLength(6);
    await first.app.idle();
  });
});
