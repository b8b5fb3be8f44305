import { describe, expect, test } from "vitest";
import { Container } from "../src/container/container.js";
import { AmbiguousProviderError } from "../src/container/missing-provider-error.js";

abstract class RefundChannel {
  abstract ask(): string;
}
class SlackRefundChannel extends RefundChannel {
  ask(): string {
    return "slack";
  }
}
class TerminalRefundChannel extends RefundChannel {
  ask(): string {
    return "terminal";
  }
}

describe("container", () => {
  test("a contract resolves to the one provider extending it, the same singleton on every lookup", () => {
    const container = new Container([SlackRefundChannel]);
    const first = container.get(RefundChannel);
    expect(first).toBeInstanceOf(SlackRefundChannel);
    expect(container.get(RefundChannel)).toBe(first);
    expect(container.get(SlackRefundChannel)).toBe(first);
  });

  test("a provider registered after a contract was resolved is seen by the next lookup of it", () => {
    const container = new Container([SlackRefundChannel]);
    expect(container.get(RefundChannel).ask()).toBe("slack");
    container.register(TerminalRefundChannel);
    expect(() => container.get(RefundChannel)).toThrow(AmbiguousProviderError);
  });
});
