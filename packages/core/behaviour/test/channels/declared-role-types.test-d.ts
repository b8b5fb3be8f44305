import {
  type App,
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  Dto,
  PauseAnswerer,
  type RoleAnswer,
} from "@agboss/core";
import { expectTypeOf, test } from "vitest";
import { z } from "zod";

// Type-level checks of roles that declare their DTOs on ChannelOf, without generated types, run by
// tsc in vitest's typecheck mode. An unused @ts-expect-error is an error too, so each case fails its
// test when the typing it guards is loosened.

class RefundRequestDto extends Dto({ orderId: z.string(), amountCents: z.number().int() }) {}
class DamageClaimDto extends Dto({ orderId: z.string(), amountCents: z.number().int() }) {}
class DamageAssessmentDto extends Dto({ refundCents: z.number().int(), note: z.string().optional() }) {}
class OtherDto extends Dto({ something: z.boolean() }) {}

@ChannelRole({
  name: "typed-refund-approval-channel",
  description: "Approves refunds",
  approves: RefundRequestDto,
  answeredBy: PauseAnswerer.Channel,
})
abstract class TypedRefundApproval extends ChannelOf<TypedRefundApproval, RefundRequestDto> {}

@ChannelRole({
  name: "typed-damage-assessment-channel",
  description: "Says how much to refund",
  ask: DamageClaimDto,
  answer: DamageAssessmentDto,
  answeredBy: PauseAnswerer.Channel,
})
abstract class TypedDamageAssessment extends ChannelOf<
  TypedDamageAssessment,
  DamageClaimDto,
  DamageAssessmentDto
> {}

@ChannelRole({
  name: "plain-approval-channel",
  description: "Declares nothing",
  approves: RefundRequestDto,
  answeredBy: PauseAnswerer.Channel,
})
abstract class PlainApproval extends ChannelOf<PlainApproval> {}

declare const app: App;

test("[RP-12] a role that declares its DTO types the arguments its channel's send gets", () => {
  expectTypeOf<ChannelAsk<TypedRefundApproval>["value"]["arguments"]>().toEqualTypeOf<RefundRequestDto>();

  @Channel({ name: "typed-refund-approval-impl-channel", description: "Posts it" })
  class TypedImpl extends TypedRefundApproval {
    async send(ask: ChannelAsk<TypedRefundApproval>) {
      expectTypeOf(ask.value.arguments.amountCents).toBeNumber();
      // @ts-expect-error the approved DTO has no amountInCents
      void ask.value.arguments.amountInCents;
      return ChannelOutcome.awaitReply<TypedRefundApproval>();
    }
  }
  void TypedImpl;

  // without declared types, as before: any record
  // biome-ignore lint/suspicious/noExplicitAny: the untyped fallback is what is checked
  expectTypeOf<ChannelAsk<PlainApproval>["value"]["arguments"]>().toEqualTypeOf<Record<string, any>>();
});

test("[RP-12] a question role's declared answer types app.resume<Role>, app.answer<Role> and answered<Role>", async () => {
  expectTypeOf<RoleAnswer<TypedDamageAssessment>>().toEqualTypeOf<DamageAssessmentDto>();
  const credential = { tenantId: "acme", answeredBy: "lead-4" };

  await app.resume<TypedDamageAssessment>({ pauseId: "p1", answer: { refundCents: 1250 } }, credential);
  await app.answer<TypedDamageAssessment>(
    { pauseId: "p1", answer: { refundCents: 0, note: "lid" } },
    credential,
  );
  // a decision or a reply is still allowed: the role's interpreter may read words
  await app.resume<TypedDamageAssessment>({ pauseId: "p1", reply: "half" }, credential);

  // @ts-expect-error refundCents is a number
  await app.resume<TypedDamageAssessment>({ pauseId: "p1", answer: { refundCents: "12.50" } }, credential);
  await app.answer<TypedDamageAssessment>(
    // @ts-expect-error the answer DTO has no amount field
    { pauseId: "p1", answer: { refundCents: 1, amount: 2 } },
    credential,
  );
  // @ts-expect-error refundCents is required
  ChannelOutcome.answered<TypedDamageAssessment>({ note: "no amount" });

  // without naming the role, any object, as before
  await app.resume({ pauseId: "p1", answer: { anything: true } }, credential);
});

test("[RP-12] @ChannelRole refuses a role class that declares other DTOs than its options", () => {
  // @ts-expect-error the class declares RefundRequestDto, the decorator approves OtherDto
  @ChannelRole({
    name: "mismatched-approval-channel",
    description: "x",
    approves: OtherDto,
    answeredBy: PauseAnswerer.Channel,
  })
  abstract class MismatchedApproval extends ChannelOf<MismatchedApproval, RefundRequestDto> {}

  // @ts-expect-error the class declares OtherDto as the answer, the decorator DamageAssessmentDto
  @ChannelRole({
    name: "mismatched-question-channel",
    description: "x",
    ask: DamageClaimDto,
    answer: DamageAssessmentDto,
    answeredBy: PauseAnswerer.Channel,
  })
  abstract class MismatchedQuestion extends ChannelOf<MismatchedQuestion, DamageClaimDto, OtherDto> {}

  void [MismatchedApproval, MismatchedQuestion];
});
