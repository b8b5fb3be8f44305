import type { MockInstance } from "vitest";

/**
 * An instance whose methods are vitest spies: each still has its own signature and also the
 * `MockInstance` API (`mockResolvedValue`, `mockImplementation`, `mock.calls`, …). What `mockOf` returns.
 *
 * @example
 * const slack: MockedInstance<SlackRefundApprovalChannel> = mockOf(SlackRefundApprovalChannel);
 * slack.send.mockResolvedValue(ChannelOutcome.decided({ approved: true }));
 */
export type MockedInstance<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? T[K] & MockInstance<(...args: A) => R> : T[K];
};
