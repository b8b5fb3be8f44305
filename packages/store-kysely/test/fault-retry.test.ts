import { LeaseLostError, StoreUnavailableError } from "@agboss/core";
import { describe, expect, test } from "vitest";
import { CommitFailure, FaultRetry } from "../src/fault-retry.js";
import { DEFAULT_STORE_RETRY, StoreFault, storeRetryPolicy } from "../src/index.js";

/** A driver error with a code, classified by the test dialect below. */
const driverError = (code: string) => Object.assign(new Error("the driver failed"), { code });
const faultOf = (error: unknown) =>
  ({ LOST: StoreFault.ConnectionLost, BUSY: StoreFault.Contention })[
    (error as { code?: string })?.code ?? ""
  ];

/** Fails with each of `errors` in turn, then returns "done"; counts its calls. */
function failing(...errors: unknown[]) {
  const calls = { count: 0 };
  const run = async () => {
    const error = errors[calls.count++];
    if (error !== undefined) throw error;
    return "done";
  };
  return { run, calls };
}

const retry = (attempts = 4) =>
  new FaultRetry({ name: "test:db", faultOf, retry: { attempts, baseDelayMs: 1, maxDelayMs: 2 } });

describe("FaultRetry", () => {
  test("runs a read or a write again after transient faults, and returns what the last attempt returned", async () => {
    const read = failing(driverError("LOST"), driverError("BUSY"));
    expect(await retry().read(read.run)).toBe("done");
    expect(read.calls.count).toBe(3);
    // A COMMIT the database refused and rolled back wrote nothing: safe to run the transaction again.
    const write = failing(driverError("LOST"), new CommitFailure(driverError("BUSY")));
    expect(await retry().write(write.run)).toBe("done");
    expect(write.calls.count).toBe(3);
  });

  test("gives StoreUnavailableError, with the driver's error as cause, once the attempts are spent", async () => {
    const lost = driverError("LOST");
    const write = failing(lost, lost, lost, lost);
    const error = await retry(3)
      .write(write.run)
      .catch((e: unknown) => e);
    expect(write.calls.count).toBe(3);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe("store.unavailable");
    expect((error as Error).cause).toBe(lost);
    expect((error as Error).message).toContain("The store test:db could not write");
    expect((error as Error).message).toContain("3 times");
    expect((error as Error).message).toContain("the driver failed [LOST]");
    expect((error as Error).message).toContain("nothing was written");
  });

  test("runs a one-statement write again even after its connection was lost in flight, and once spent says it may have landed", async () => {
    const lost = driverError("LOST");
    const statement = failing(lost, driverError("BUSY"));
    expect(await retry().statement(statement.run)).toBe("done");
    expect(statement.calls.count).toBe(3);
    const spent = failing(lost, lost, lost);
    const error = await retry(3)
      .statement(spent.run)
      .catch((e: unknown) => e);
    expect(spent.calls.count).toBe(3);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain("could not write");
    expect((error as Error).message).toContain("may have landed");
    expect((error as Error).message).not.toContain("nothing was written");
  });

  test("never runs a write again whose connection was lost while COMMIT was in flight", async () => {
    const lost = driverError("LOST");
    const write = failing(new CommitFailure(lost));
    const error = await retry()
      .write(write.run)
      .catch((e: unknown) => e);
    expect(write.calls.count).toBe(1);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).cause).toBe(lost);
    expect((error as Error).message).toMatch(/outcome is unknown.*Recovery settles it/s);
  });

  test("passes every other error through at once, as it was thrown: LeaseLostError, constraint violations, a failed COMMIT", async () => {
    const leaseLost = new LeaseLostError({ key: "tree", epoch: 1 });
    const constraint = driverError("23505");
    for (const error of [leaseLost, constraint]) {
      const write = failing(error);
      await expect(retry().write(write.run)).rejects.toBe(error);
      expect(write.calls.count).toBe(1);
    }
    await expect(retry().write(failing(new CommitFailure(constraint)).run)).rejects.toBe(constraint);
    // Without a dialect's faultOf nothing is retried, and nothing is wrapped.
    const lost = driverError("LOST");
    const bare = failing(lost);
    await expect(new FaultRetry({ name: "x" }).read(bare.run)).rejects.toBe(lost);
    expect(bare.calls.count).toBe(1);
  });
});

describe("storeRetryPolicy", () => {
  test("fills in the defaults, and keeps counts whole and delays in order", () => {
    expect(storeRetryPolicy()).toEqual(DEFAULT_STORE_RETRY);
    expect(storeRetryPolicy({ attempts: 0, baseDelayMs: -5, maxDelayMs: 10.7 })).toEqual({
      attempts: 1,
      baseDelayMs: 0,
      maxDelayMs: 10,
    });
    expect(storeRetryPolicy({ baseDelayMs: 500, maxDelayMs: 100 })).toMatchObject({ maxDelayMs: 500 });
    expect(storeRetryPolicy({ attempts: Number.NaN }).attempts).toBe(DEFAULT_STORE_RETRY.attempts);
  });
});
