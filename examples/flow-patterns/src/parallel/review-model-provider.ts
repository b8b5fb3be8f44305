import { type ChatModel, ModelProvider, type ModelProviderHandler, ScriptedChatModel } from "@agboss/core";
import { financeTurn, legalTurn, opsTurn, summaryTurn } from "./review-script.js";

const turns = {
  "scripted/legal": legalTurn,
  "scripted/finance": financeTurn,
  "scripted/ops": opsTurn,
  "scripted/summary": summaryTurn,
} as const;

/** Serves each review agent's model with a scripted one, so the example needs no network and no key. */
@ModelProvider({
  name: "review-model-provider",
  description: "Plays the review agents' scripted turns",
  serves: Object.keys(turns),
})
export class ReviewModelProvider implements ModelProviderHandler {
  chatModel(modelId: string): ChatModel {
    return new ScriptedChatModel([turns[modelId as keyof typeof turns]], { loop: true });
  }
}
