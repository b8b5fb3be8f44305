import { type ChatModel, ModelProvider, type ModelProviderHandler, ScriptedChatModel } from "@agboss/core";
import { releaseTurn, reviewerTurn } from "./release-script.js";

/** Serves the reviewers' and the release agent's models with scripted ones: no network, no key. */
@ModelProvider({
  name: "release-model-provider",
  description: "Plays the reviewers' and the release agent's scripted turns",
  serves: ["scripted/reviewer", "scripted/release"],
})
export class ReleaseModelProvider implements ModelProviderHandler {
  chatModel(modelId: string): ChatModel {
    return new ScriptedChatModel([modelId === "scripted/release" ? releaseTurn : reviewerTurn], {
      loop: true,
    });
  }
}
