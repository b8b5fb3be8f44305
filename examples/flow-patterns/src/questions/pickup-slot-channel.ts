import { ChannelOf, ChannelRole, PauseAnswerer } from "@agboss/core";
import { PickupRequestDto } from "./pickup-request-dto.js";
import { PickupSlotDto } from "./pickup-slot-dto.js";

/** A question role: the thread's owner says when the courier comes. */
@ChannelRole({
  name: "pickup-slot-channel",
  description: "The desk picks when the courier collects the return",
  ask: PickupRequestDto,
  answer: PickupSlotDto,
  answeredBy: PauseAnswerer.ThreadOwner,
})
export abstract class PickupSlotChannel extends ChannelOf<PickupSlotChannel> {}
