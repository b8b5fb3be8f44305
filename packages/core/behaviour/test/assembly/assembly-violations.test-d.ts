import { ChannelOf, ChannelRole, type ChannelRoleOptions, PauseAnswerer } from "@agboss/core";
import { expectTypeOf, test } from "vitest";
import { ExpenseDto } from "../../src/fixtures/approval-app.js";
import { DisputeDto, SettlementDto } from "../../src/fixtures/question-app.js";

// Type-level half of AS-06, checked by tsc in vitest's typecheck mode (the assembly half is in
// assembly-violations.test.ts). An unused @ts-expect-error is an error too, so each case below fails
// its test if answeredBy became optional or got a default.

test("[AS-06] answeredBy is a required option of a channel role, with no default", () => {
  expectTypeOf<ChannelRoleOptions["answeredBy"]>().toEqualTypeOf<PauseAnswerer>();
  expectTypeOf<{
    name: "loose-approval-channel";
    description: "Forgot who answers";
    approves: typeof ExpenseDto;
  }>().not.toExtend<ChannelRoleOptions>();
  expectTypeOf<{
    name: "loose-approval-channel";
    description: "Says who answers";
    approves: typeof ExpenseDto;
    answeredBy: PauseAnswerer;
  }>().toExtend<ChannelRoleOptions>();
});

test("[AS-06] @ChannelRole without answeredBy does not compile, for an approval role and a question role", () => {
  // @ts-expect-error answeredBy is required on an approval role
  @ChannelRole({ name: "loose-approval-channel", description: "Forgot who answers", approves: ExpenseDto })
  abstract class LooseApprovalChannel extends ChannelOf<LooseApprovalChannel> {}

  // @ts-expect-error answeredBy is required on a question role
  @ChannelRole({
    name: "loose-question-channel",
    description: "Forgot who answers",
    ask: DisputeDto,
    answer: SettlementDto,
  })
  abstract class LooseQuestionChannel extends ChannelOf<LooseQuestionChannel> {}

  @ChannelRole({
    name: "strict-approval-channel",
    description: "Says who answers",
    approves: ExpenseDto,
    answeredBy: PauseAnswerer.Channel,
  })
  abstract class StrictApprovalChannel extends ChannelOf<StrictApprovalChannel> {}

  expectTypeOf<[LooseApprovalChannel, LooseQuestionChannel, StrictApprovalChannel]>().not.toBeAny();
});
