import { describe, expect, test } from "vitest";
import { RoleLists } from "../src/pending-pauses.js";

describe("a role's pending list while people watch it", () => {
  test("is read once for everyone within its age, per tenant and role, and anew once forgotten", async () => {
    const lists = new RoleLists(60_000);
    let reads = 0;
    const load = () => {
      reads++;
      return Promise.resolve([]);
    };
    await lists.read("acme", "refund-approval-channel", load);
    await lists.read("acme", "refund-approval-channel", load);
    expect(reads).toBe(1);
    await lists.read("globex", "refund-approval-channel", load);
    await lists.read("acme", "deploy-channel", load);
    expect(reads).toBe(3);
    lists.forget("acme");
    await lists.read("acme", "refund-approval-channel", load);
    await lists.read("globex", "refund-approval-channel", load);
    expect(reads).toBe(4);
  });

  test("is read again after a failed read", async () => {
    const lists = new RoleLists(60_000);
    await expect(lists.read("acme", "r", () => Promise.reject(new Error("store down")))).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(await lists.read("acme", "r", () => Promise.resolve([]))).toEqual([]);
  });
});
