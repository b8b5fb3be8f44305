import { ChannelOf, ChannelRole, PauseAnswerer } from "@agboss/core";
import { DamageAssessmentDto } from "./damage-assessment-dto.js";
import { DamageClaimDto } from "./damage-claim-dto.js";
import { DamageReplyInterpreter } from "./damage-reply-interpreter.js";

/** A question role: the thread's owner says how much of a damaged order to refund, in a form or in words. */
@ChannelRole({
  name: "damage-assessment-channel",
  description: "The desk says how much of a damaged order to refund",
  ask: DamageClaimDto,
  answer: DamageAssessmentDto,
  answeredBy: PauseAnswerer.ThreadOwner,
  replyInterpreter: DamageReplyInterpreter,
})
export abstract class DamageAssessmentChannel extends ChannelOf<DamageAssessmentChannel> {}
