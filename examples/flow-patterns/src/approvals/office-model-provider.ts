import { type ChatModel, ModelProvider, type ModelProviderHandler, ScriptedChatModel } from "@agboss/core";
import { officeTurn } from "./office-script.js";

/** Serves the office agent's model with a scripted one, so the example needs no network and no key. */
@ModelProvider({
  name: "office-model-provider",
  description: "Plays the office agent's scripted turn",
  serves: ["scripted/office"],
})
export class OfficeModelProvider implements ModelProviderHandler {
  chatModel(): ChatModel {
    return new ScriptedChatModel([officeTurn], { loop: true });
  }
}
