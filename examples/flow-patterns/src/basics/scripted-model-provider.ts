import {
  type ChatModel,
  ModelProvider,
  type ModelProviderHandler,
  ScriptedChatModel,
  type ScriptedTurn,
} from "@agboss/core";
import { MODEL_SCRIPT } from "./model-script.js";

/**
 * Serves every model id with a scripted model, so the demo runs with no network and no key.
 * Swap it for a provider over a real model (see the README) and nothing else changes.
 */
@ModelProvider({
  name: "scripted-model-provider",
  description: "Plays the turns registered under MODEL_SCRIPT",
  serves: ["*"],
  deps: [MODEL_SCRIPT],
})
export class ScriptedModelProvider implements ModelProviderHandler {
  constructor(private readonly script: readonly ScriptedTurn[]) {}

  chatModel(): ChatModel {
    return new ScriptedChatModel(this.script);
  }
}
