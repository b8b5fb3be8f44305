import { type ChatModel, ModelProvider, type ModelProviderHandler, ScriptedChatModel } from "@agboss/core";
import { returnsTurn } from "./returns-script.js";

/** Serves the returns agent's model with a scripted one, so the example needs no network and no key. */
@ModelProvider({
  name: "returns-model-provider",
  description: "Plays the returns agent's scripted turn",
  serves: ["scripted/returns"],
})
export class ReturnsModelProvider implements ModelProviderHandler {
  chatModel(): ChatModel {
    return new ScriptedChatModel([returnsTurn], { loop: true });
  }
}
