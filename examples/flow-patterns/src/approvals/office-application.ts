import { Application } from "@agboss/core";
import { OfficeLedger } from "./office-ledger.js";
import { OfficeModelProvider } from "./office-model-provider.js";
import { OfficeWorkflow } from "./office-workflow.js";

/** The office: its tools ask the thread's owner in the terminal (TerminalUserChannel). */
@Application({
  name: "office-application",
  workflows: [OfficeWorkflow],
  providers: [OfficeLedger, OfficeModelProvider],
})
export class OfficeApplication {}
