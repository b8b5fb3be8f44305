import { describe, expect, test } from "vitest";
import { AgbossError, hasCause } from "../src/errors/agboss-error.js";
import { DtoValidationError } from "../src/errors/dto-validation-error.js";
import { AgentFailedError, StepFailedError } from "../src/errors/step-failed-error.js";
import { NotPausedError, UnknownPauseError } from "../src/pauses/pause-errors.js";
import { LeaseLostError } from "../src/store/fence.js";

describe("errors", () => {
  test("each class matches its own instances and its subclasses', never a sibling's", () => {
    const failed = new AgentFailedError("refund-agent", "agent/refund-agent", "boom");
    expect(failed).toBeInstanceOf(AgentFailedError);
    expect(failed).toBeInstanceOf(StepFailedError);
    expect(failed).toBeInstanceOf(AgbossError);
    expect(failed).toBeInstanceOf(Error);
    expect(failed).not.toBeInstanceOf(LeaseLostError);
    expect(failed).not.toBeInstanceOf(DtoValidationError);
    expect(new StepFailedError("n", "m")).not.toBeInstanceOf(AgentFailedError);
    expect(new UnknownPauseError("p")).not.toBeInstanceOf(NotPausedError);
    expect({ code: "pause.unknown" }).not.toBeInstanceOf(UnknownPauseError);
    expect(failed.name).toBe("AgentFailedError");
    expect(failed.code).toBe("agent.failed");
  });

  test("instanceof survives a second copy of core", async () => {
    // A query string makes vite load the modules again: a second, independent copy of the classes.
    const copyOf = (id: string): Promise<unknown> => import(/* @vite-ignore */ `${id}?copy`);
    const copy = (await copyOf(
      "../src/pauses/pause-errors.js",
    )) as typeof import("../src/pauses/pause-errors.js");
    const copyBase = (await copyOf(
      "../src/errors/agboss-error.js",
    )) as typeof import("../src/errors/agboss-error.js");
    expect(copy.UnknownPauseError).not.toBe(UnknownPauseError);
    const fromCopy = new copy.UnknownPauseError("p1");
    expect(fromCopy).toBeInstanceOf(UnknownPauseError);
    expect(fromCopy).toBeInstanceOf(AgbossError);
    expect(new UnknownPauseError("p2")).toBeInstanceOf(copy.UnknownPauseError);
    expect(new UnknownPauseError("p3")).toBeInstanceOf(copyBase.AgbossError);
    expect(fromCopy).not.toBeInstanceOf(copy.NotPausedError);
  });

  test("hasCause follows the cause chain", () => {
    class PaymentDeclinedError extends Error {}
    const failed = new AgentFailedError("a", "n", "x", {
      cause: new StepFailedError("n", "y", { cause: new PaymentDeclinedError("no") }),
    });
    expect(hasCause(failed, PaymentDeclinedError)).toBe(true);
    expect(hasCause(failed, LeaseLostError)).toBe(false);
  });
});
