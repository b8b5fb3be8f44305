import { Application } from "@agboss/core";
import { ReturnsLedger } from "./returns-ledger.js";
import { ReturnsModelProvider } from "./returns-model-provider.js";
import { ReturnsWorkflow } from "./returns-workflow.js";
import { TerminalDamageAssessmentChannel } from "./terminal-damage-assessment-channel.js";
import { TerminalPickupSlotChannel } from "./terminal-pickup-slot-channel.js";

/** The returns desk: its two question roles are implemented by channels that ask in the terminal. */
@Application({
  name: "returns-application",
  workflows: [ReturnsWorkflow],
  providers: [
    ReturnsLedger,
    ReturnsModelProvider,
    TerminalPickupSlotChannel,
    TerminalDamageAssessmentChannel,
  ],
})
export class ReturnsApplication {}
