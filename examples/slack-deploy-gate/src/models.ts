import {
  type ChatModel,
  type ChatRequest,
  callTool,
  ModelProvider,
  type ModelProviderHandler,
  replyWith,
  ScriptedChatModel,
} from "@agboss/core";
import { DEPLOY_MODEL, DeployTool } from "./deploy-gate.js";

/**
 * The agent's moves, read from the conversation so that any process can play them: first it calls the
 * deploy tool with what the request names, then it reports the tool's result (or why it was held).
 */
function deployTurn(request: ChatRequest) {
  const result = request.messages.findLast((m) => m.role === "tool");
  if (result !== undefined) {
    if (result.content.startsWith("Tool error:")) {
      return replyWith(`Not deployed: ${result.content.slice("Tool error:".length).trim()}.`);
    }
    return replyWith(`Deployed: ${(JSON.parse(result.content) as { status: string }).status}.`);
  }
  const text = request.messages.find((m) => m.role === "user")?.content ?? "";
  const [, service = "", version = "", environment = ""] = /^Deploy (\S+) (\S+) to (\S+)\.$/.exec(text) ?? [];
  return callTool(DeployTool, { service, version, environment });
}

/** Plays the deploy agent from a script: the example needs no model and no network. */
@ModelProvider({
  name: "scripted-deploy-model-provider",
  description: "Plays the deploy agent",
  serves: [DEPLOY_MODEL],
})
export class ScriptedDeployModelProvider implements ModelProviderHandler {
  readonly #model = new ScriptedChatModel([deployTurn], { loop: true });
  chatModel(): ChatModel {
    return this.#model;
  }
}
