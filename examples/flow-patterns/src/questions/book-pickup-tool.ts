import { Tool, type ToolHandler } from "@agboss/core";
import { PickupRequestDto } from "./pickup-request-dto.js";
import { PickupSlotChannel } from "./pickup-slot-channel.js";
import type { PickupSlotDto } from "./pickup-slot-dto.js";
import { ReturnsDoneDto } from "./returns-done-dto.js";
import { ReturnsLedger } from "./returns-ledger.js";

/** Books the courier for the slot the desk picked. */
@Tool({
  name: "book-pickup-tool",
  description: "Books a courier to collect a return",
  input: PickupRequestDto,
  output: ReturnsDoneDto,
  channel: PickupSlotChannel,
  deps: [ReturnsLedger],
})
export class BookPickupTool implements ToolHandler<PickupRequestDto, ReturnsDoneDto, PickupSlotDto> {
  constructor(private readonly ledger: ReturnsLedger) {}

  run({ orderId }: PickupRequestDto, { day, window }: PickupSlotDto): Promise<ReturnsDoneDto> {
    this.ledger.runs.push("book-pickup-tool");
    return Promise.resolve({ status: `courier booked for ${day} ${window} to collect ${orderId}` });
  }
}
