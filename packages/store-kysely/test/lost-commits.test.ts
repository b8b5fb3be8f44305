import { StoreUnavailableError } from "@agboss/core";
import { afterEach, expect, test, vi } from "vitest";
import { WriteTransactions } from "../src/write-transactions.js";

// What a store remembers of passes whose writes were lost (told done, then not committed): their later
// writes, renewals and reads are refused. That memory is bounded, but a loss is never forgotten early.

/** The store's write transactions with only what remembering losses needs (no database is reached). */
function writeTransactions() {
  return new WriteTransactions({
    db: undefined as never,
    capabilities: { groupCommit: true, beginWriteTransaction: "begin" } as never,
  });
}

afterEach(() => {
  vi.useRealTimers();
});

test("a pass's lost commit stays refused however many other leases lose theirs meanwhile, and is forgotten only once it is old and the count is over its bound", () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(new Date("2026-12-05T09:00:00Z"));
  const transactions = writeTransactions();
  const fence = { key: "acme/t-1", epoch: 3 };
  transactions.loseFence(fence, new Error("the disk failed"));
  // A database outage in a busy process: thousands of other passes lose theirs within the same minute.
  for (let i = 0; i < 5_000; i++) {
    transactions.loseFence({ key: `acme/other-${i}`, epoch: 1 }, new Error("the server went away"));
  }
  expect(() => transactions.refuseAfterLostCommit(fence)).toThrow(StoreUnavailableError);

  // Minutes later (every holder has long learnt of its loss), a new loss lets the oldest go.
  vi.setSystemTime(new Date("2026-12-05T09:03:00Z"));
  const late = { key: "acme/late", epoch: 1 };
  transactions.loseFence(late, new Error("the disk failed again"));
  expect(() => transactions.refuseAfterLostCommit(late)).toThrow(StoreUnavailableError);
  expect(() => transactions.refuseAfterLostCommit(fence)).not.toThrow();
  expect(() => transactions.refuseAfterLostCommit({ key: "acme/other-4999", epoch: 1 })).toThrow(
    StoreUnavailableError,
  );
});
