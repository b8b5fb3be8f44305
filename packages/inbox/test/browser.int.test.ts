// The inbox in a real browser: Debian's Chromium driven by playwright-core, in front of two instances
// of the application behind a round-robin balancer, over one SQLite store.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Balancer, balance } from "./balancer.js";
import { CaseStart, OpsLedger } from "./fixtures/ops-desk.js";
import {
  ask,
  call,
  type Instance,
  openTestStore,
  release,
  startInstance,
  type TestStore,
} from "./harness.js";

const CHROMIUM = process.env.AGBOSS_CHROMIUM ?? "/usr/bin/chromium";
// AGBOSS_INBOX_SCREENSHOTS=1 writes the screenshots of docs/inbox.md; otherwise they go to a scratch folder.
const KEEP_SHOTS = process.env.AGBOSS_INBOX_SCREENSHOTS === "1";
const SHOTS = KEEP_SHOTS
  ? fileURLToPath(new URL("../../../docs/images/", import.meta.url))
  : mkdtempSync(join(tmpdir(), "agboss-inbox-shots-"));
mkdirSync(SHOTS, { recursive: true });

let store: TestStore;
let a: Instance;
let b: Instance;
let lb: Balancer;
let browser: Browser;

async function signedIn(
  who: string,
  viewport = { width: 960, height: 720 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, reducedMotion: "reduce", colorScheme: "light" });
  context.setDefaultTimeout(5_000);
  await context.addCookies([{ name: "who", value: who, url: lb.url }]);
  const page = await context.newPage();
  page.on("pageerror", (error) => {
    throw error;
  });
  await page.goto(`${lb.url}/inbox`);
  await expect.poll(() => page.locator(".connection").textContent()).toBe("Live");
  return { context, page };
}

const card = (page: Page, tool: string) => page.locator("article.pause", { hasText: tool });
const runs = async () => {
  await Promise.all([a.app.idle(), b.app.idle()]);
  return [...a.app.get(OpsLedger).runs, ...b.app.get(OpsLedger).runs];
};
const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `inbox-${name}.png`), fullPage: false });

beforeAll(async () => {
  store = await openTestStore("sqlite");
  a = await startInstance(store);
  b = await startInstance(store);
  lb = await balance([a.url, b.url]);
  browser = await chromium.launch({ executablePath: CHROMIUM });
  await ask(b.app, "deploy api 1.4.2", "deploy:api");
  await ask(a.app, "assess ord_7", "damage:ord_7");
  await ask(b.app, "refund ord_1 2500", "refund:ord_1");
  await ask(a.app, "refund ord_2 900", "refund:ord_2");
});
afterAll(async () => {
  await browser?.close();
  await lb?.close();
  await a?.close();
  await b?.close();
  await store?.dispose();
  if (!KEEP_SHOTS) rmSync(SHOTS, { recursive: true, force: true });
});

describe("the inbox in Chromium, two instances behind a balancer", () => {
  test("lists the person's pauses, newest first, with the arguments and the question", async () => {
    const { context, page } = await signedIn("dana");
    const headings = page.locator("article.pause h2");
    await expect
      .poll(() => headings.allTextContents())
      .toEqual(["Answer for assess-tool", "Approve deploy-tool?"]);
    const deploy = card(page, "deploy-tool");
    expect(await deploy.locator("dl").textContent()).toContain("1.4.2");
    expect(await deploy.textContent()).toContain("Confirm the deployment you asked for");
    expect(await deploy.locator("time").getAttribute("datetime")).toMatch(/^\d{4}-\d\d-\d\dT/);
    await page.getByLabel("Filter", { exact: true }).fill("deploy");
    await expect.poll(() => headings.allTextContents()).toEqual(["Approve deploy-tool?"]);
    await page.getByLabel("Filter", { exact: true }).fill("");
    await shot(page, "list");
    await context.close();
  });

  test("approves with the keyboard alone, and keeps the focus in the list", async () => {
    const { context, page } = await signedIn("dana");
    const approve = card(page, "deploy-tool").getByRole("button", { name: "Approve", exact: true });
    await approve.waitFor();
    for (let i = 0; i < 40 && !(await approve.evaluate((el) => el === document.activeElement)); i++)
      await page.keyboard.press("Tab");
    expect(await approve.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press("Enter");
    await expect.poll(() => card(page, "deploy-tool").count()).toBe(0);
    await expect
      .poll(() => page.getByRole("status").last().textContent())
      .toBe("Approved: deploy-tool (service api, version 1.4.2).");
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.textContent))
      .toBe("Answer for assess-tool");
    expect(await runs()).toContainEqual({ tool: "deploy-tool", args: { service: "api", version: "1.4.2" } });
    await context.close();
  });

  test("answers a question field by field", async () => {
    const { context, page } = await signedIn("dana");
    const assess = card(page, "assess-tool");
    await assess.getByLabel("refundCents").fill("7.5");
    await assess.getByRole("button", { name: "Send answer" }).click();
    expect(await assess.getByLabel("refundCents").getAttribute("aria-invalid")).toBe("true");
    expect(await assess.textContent()).toContain("Enter a whole number.");
    await assess.getByLabel("refundCents").fill("700");
    await assess.getByLabel("restock").check();
    await assess.getByLabel("condition").selectOption("broken");
    await assess.getByRole("button", { name: "Send answer" }).click();
    // The page's schema has no rule across fields; the server's DTO refuses it, and the page marks the field.
    await expect.poll(() => assess.getByLabel("restock").getAttribute("aria-invalid")).toBe("true");
    expect(await assess.textContent()).toContain("a broken item cannot be restocked");
    expect(await card(page, "assess-tool").count()).toBe(1);
    await assess.getByLabel("condition").selectOption("cracked");
    await assess.getByLabel("note (optional)").fill("lid cracked");
    await assess.getByRole("button", { name: "Send answer" }).click();
    await expect.poll(() => card(page, "assess-tool").count()).toBe(0);
    expect(await runs()).toContainEqual({
      tool: "assess-tool",
      args: { orderId: "ord_7", refundCents: 700, restock: true, condition: "cracked", note: "lid cracked" },
    });
    await context.close();
  });

  test("overrides the arguments: an invalid value is refused in the page, a valid one approved", async () => {
    const { context, page } = await signedIn("mia");
    const refund = card(page, "ord_1");
    expect(await refund.locator("dl").textContent()).toContain("masked");
    expect(await refund.locator("dl").textContent()).not.toContain("4242");
    await refund.getByRole("button", { name: "Change arguments…" }).click();
    await expect
      .poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement).name))
      .toBe("orderId");
    await refund.getByLabel("amountCents").fill("-5");
    await refund.getByRole("button", { name: "Approve with these arguments" }).click();
    expect(await refund.getByLabel("amountCents").getAttribute("aria-invalid")).toBe("true");
    await expect
      .poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement).name))
      .toBe("amountCents");
    expect(await refund.textContent()).toContain("More than 0.");
    await shot(page, "override-invalid");
    await refund.getByLabel("amountCents").fill("1900");
    await refund.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect.poll(() => card(page, "ord_1").count()).toBe(0);
    expect(await runs()).toContainEqual({
      tool: "refund-tool",
      args: { orderId: "ord_1", amountCents: 1900, cardNumber: "4242424242424242" },
    });
    await context.close();
  });

  test("a reply in words that is not understood shows the reason in place; the question stays open", async () => {
    const { context, page } = await signedIn("mia");
    const refund = card(page, "ord_2");
    await refund.getByRole("button", { name: "Reply in words…" }).click();
    await refund.getByLabel("Your reply").fill("maybe later");
    await refund.getByRole("button", { name: "Send reply" }).click();
    const alert = refund.getByRole("alert");
    await expect
      .poll(() => alert.textContent())
      .toContain('"maybe later" is neither "approve" nor "reject: <why>".');
    expect(await card(page, "ord_2").count()).toBe(1);
    await shot(page, "reply-not-understood");
    await refund.getByLabel("Your reply").fill("reject: the card expired");
    await refund
      .getByLabel("Your reply")
      .press("Enter")
      .catch(() => undefined);
    await refund
      .getByRole("button", { name: "Send reply" })
      .click()
      .catch(() => undefined);
    await expect.poll(() => card(page, "ord_2").count()).toBe(0);
    await context.close();
  });

  test("pauses asked, answered elsewhere and withdrawn arrive without a reload; the audit trail says who answered", async () => {
    const { context, page } = await signedIn("dana");
    await expect.poll(() => page.locator("article.pause").count()).toBe(0);
    await release(b.app, "v2.0", "release:v2.0");
    const signOffs = page.locator("article.pause", { hasText: "sign-off-tool" });
    await expect.poll(() => signOffs.count()).toBe(3);
    const ids = await signOffs.evaluateAll((els) =>
      els.map((el) => (el as HTMLElement).dataset.pauseId ?? ""),
    );
    // Answered through @agboss/http on whichever instance the balancer picks, not through this page.
    const first = await call(lb.url, `/agboss/pauses/${ids[0]}/answer`, {
      as: "dana",
      body: { decision: { approved: true } },
    });
    expect(first.status).toBe(200);
    await expect.poll(() => signOffs.count()).toBe(2);
    await expect
      .poll(() => page.locator(".gone").textContent())
      .toMatch(/sign-off-tool \(reviewer \w+, release v2\.0\) was answered by dana/);
    await signOffs.first().getByRole("button", { name: "Audit trail" }).click();
    const trail = page.locator(".audit").first();
    await expect.poll(() => trail.locator("tbody tr").count()).toBe(3);
    expect(await trail.textContent()).toContain("approved");
    expect(await trail.textContent()).toContain("waiting");
    await shot(page, "audit");
    await call(lb.url, `/agboss/pauses/${ids[1]}/answer`, {
      as: "dana",
      body: { decision: { approved: true } },
    });
    await expect.poll(() => signOffs.count()).toBe(0);
    await expect.poll(() => page.locator(".gone").textContent()).toContain("was withdrawn");
    await shot(page, "withdrawn");
    await context.close();
  });

  test("a pause asked inside a child workflow opens the audit trail of its whole tree", async () => {
    const { context, page } = await signedIn("dana");
    await a.app.execute(
      CaseStart,
      { text: "assess ord_5" },
      { threadId: "case:ord_5", ownerId: "dana", tenant: { tenantId: "acme" } },
    );
    const asked = card(page, "ord_5");
    await expect.poll(() => asked.count()).toBe(1);
    await asked.getByRole("button", { name: "Audit trail" }).click();
    const trail = asked.locator(".audit");
    await expect.poll(() => trail.locator("tbody tr").count()).toBe(1);
    expect(await trail.textContent()).toContain("waiting");
    const pauseId = await asked.evaluate((el) => (el as HTMLElement).dataset.pauseId ?? "");
    const answered = await call(lb.url, `/agboss/pauses/${pauseId}/answer`, {
      as: "dana",
      body: { answer: { refundCents: 100, restock: true, condition: "scratched", note: "corner" } },
    });
    expect(answered.status).toBe(200);
    await expect.poll(() => asked.count()).toBe(0);
    await context.close();
  });

  test("asks a person who is not signed in to sign in", async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(5_000);
    const page = await context.newPage();
    await page.goto(`${lb.url}/inbox/`);
    await expect.poll(() => page.locator(".connection").textContent()).toBe("Signed out");
    expect(await page.getByRole("alert").textContent()).toContain("You are not signed in.");
    await context.close();
  });

  test("reads on a phone", async () => {
    await ask(a.app, "deploy web 2.0.1", "deploy:web");
    await ask(b.app, "assess ord_8", "damage:ord_8");
    const { context, page } = await signedIn("dana", { width: 390, height: 844 });
    await expect.poll(() => page.locator("article.pause").count()).toBe(2);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, "phone");
    await context.close();
    expect(lb.served.every((n) => n > 0)).toBe(true);
  });
});
