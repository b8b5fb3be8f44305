import type { AnyClass } from "../container/component-registry.js";
import type { ChatMessage } from "../models/chat-model.js";
import { ANSWER_TOOL_NAME } from "../models/chat-model.js";
import type { SensitiveSource } from "../pii/sensitive-values.js";
import type { RuntimeServices } from "./runtime-services.js";

function parsed(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

/**
 * The typed values in an agent's conversation, each with the schema it came through: tool arguments
 * and outputs by the tool's DTOs, answers by the agent's output, and step inputs by every DTO a step
 * of the workflow can be given (its starts' inputs and the agents' outputs).
 * @internal
 */
export function agentSensitiveSources(
  services: RuntimeServices,
  component: AnyClass,
  workflow: string,
  messages: readonly ChatMessage[],
): SensitiveSource[] {
  const agent = services.assembled.agents.get(component);
  if (agent === undefined) return [];
  const sources: SensitiveSource[] = [];
  let inputSchemas: SensitiveSource["schema"][] | undefined;
  for (const message of messages) {
    if (message.role === "assistant") {
      for (const call of message.toolCalls ?? []) {
        const schema =
          call.name === ANSWER_TOOL_NAME
            ? agent.options.output?.schema
            : agent.tools.get(call.name)?.options.input.schema;
        if (schema !== undefined) sources.push({ schema, value: call.arguments });
      }
    } else if (message.role === "tool") {
      const schema = agent.tools.get(message.name)?.options.output.schema;
      const value = parsed(message.content);
      if (schema !== undefined && value !== undefined) sources.push({ schema, value });
    } else if (message.role === "user") {
      const value = parsed(message.content);
      if (value === undefined) continue;
      inputSchemas ??= [
        ...[...services.assembled.flows.values()]
          .filter((f) => f.workflow.name === workflow)
          .map((f) => f.start.input.schema),
        ...[...services.assembled.agents.values()].flatMap((a) =>
          a.options.output === undefined ? [] : [a.options.output.schema],
        ),
      ];
      for (const schema of inputSchemas) sources.push({ schema, value });
    }
  }
  return sources;
}
