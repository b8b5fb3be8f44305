import { Application } from "@agboss/core";
import { OfficeLedger, OfficeModelProvider, OfficeWorkflow } from "../approvals/index.js";
import {
  ReturnsLedger,
  ReturnsModelProvider,
  ReturnsWorkflow,
  TerminalDamageAssessmentChannel,
  TerminalPickupSlotChannel,
} from "../questions/index.js";
import { ReleaseModelProvider, ReleaseWorkflow } from "../quorum/index.js";

/**
 * The office, the returns desk and the release desk in one application, so that one inbox shows their
 * approvals and questions side by side. Their channels note the questions on the terminal as before;
 * the inbox answers them instead.
 */
@Application({
  name: "flow-patterns-application",
  workflows: [OfficeWorkflow, ReturnsWorkflow, ReleaseWorkflow],
  providers: [
    OfficeLedger,
    OfficeModelProvider,
    ReturnsLedger,
    ReturnsModelProvider,
    TerminalPickupSlotChannel,
    TerminalDamageAssessmentChannel,
    ReleaseModelProvider,
  ],
})
export class FlowPatternsApplication {}
