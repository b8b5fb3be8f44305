import { Application } from "@agboss/core";
import { MODEL_SCRIPT, refundScript } from "./model-script.js";
import { OrderBook } from "./order-book.js";
import { RefundDeskWorkflow } from "./refund-desk-workflow.js";
import { ScriptedModelProvider } from "./scripted-model-provider.js";

@Application({
  name: "refund-desk-application",
  description: "A shop's refund desk: one agent, two tools",
  workflows: [RefundDeskWorkflow],
  providers: [OrderBook, ScriptedModelProvider, { provide: MODEL_SCRIPT, useValue: refundScript }],
})
export class RefundDeskApplication {}
