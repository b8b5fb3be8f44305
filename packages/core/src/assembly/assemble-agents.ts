import type { AgentOptions } from "../components/agent.js";
import type { ToolOptions } from "../components/tool.js";
import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentOfKind, describeClass } from "../container/component-registry.js";
import { isDtoClass } from "../dto/dto.js";
import { assembleChannel, type ChannelUse } from "./assemble-channels.js";
import { assembleDeadlines, declaredDeadlines } from "./assemble-deadlines.js";
import type { AssembledAgent, AssembledTool } from "./assembled-application.js";
import type { AssemblyContext } from "./assembly-context.js";

/**
 * Checks an agent (its tools, its output DTO, its model is served) and resolves it. Each agent is
 * assembled once: a later step that uses it gets the same {@link AssembledAgent}. Undefined when the
 * class is no agent.
 */
export function assembleAgent(ctx: AssemblyContext, cls: AnyClass): AssembledAgent | undefined {
  const existing = ctx.agents.get(cls);
  if (existing !== undefined) return existing;
  const am = componentOfKind<AgentOptions>(cls, ComponentKind.Agent);
  if (am === undefined) {
    ctx.add(
      "flow.not-an-agent",
      `${describeClass(cls)} is used with toAgent(…) but has no @Agent({ … }) decorator.`,
    );
    return undefined;
  }
  ctx.checkName(cls);
  const tools = new Map<string, AssembledTool>();
  for (const toolClass of am.options.tools ?? []) {
    const tool = assembleTool(ctx, toolClass, cls);
    if (tool !== undefined) tools.set(tool.name, tool);
  }
  if (am.options.output !== undefined && !isDtoClass(am.options.output)) {
    ctx.add("dto.not-a-dto", `${describeClass(cls)}'s output must be a DTO class built with Dto({ … }).`);
  }
  if (!ctx.isServed(am.options.model)) {
    const known = ctx.modelProviders
      .map((p) => `${p.options.name} serves ${p.options.serves.join(", ")}`)
      .join("; ");
    ctx.add(
      "model.unserved",
      `${describeClass(cls)} uses model "${am.options.model}", which no @ModelProvider serves` +
        `${known === "" ? " (the application has none)" : ` (${known})`}. Add a provider whose serves matches it to @Application({ providers }).`,
    );
  }
  const agent: AssembledAgent = { cls, name: am.options.name, options: am.options, tools };
  ctx.agents.set(cls, agent);
  return agent;
}

/**
 * Checks a tool an agent lists (its DTOs, its `run` method, its dependencies, its channel) and resolves
 * it. Undefined when the class is no tool.
 */
function assembleTool(ctx: AssemblyContext, cls: AnyClass, agent: AnyClass): AssembledTool | undefined {
  const tm = componentOfKind<ToolOptions>(cls, ComponentKind.Tool);
  if (tm === undefined) {
    ctx.add(
      "agent.not-a-tool",
      `${describeClass(agent)} lists ${describeClass(cls)} in tools, but it has no @Tool({ … }) decorator.`,
    );
    return undefined;
  }
  ctx.checkName(cls);
  for (const field of ["input", "output"] as const) {
    if (!isDtoClass(tm.options[field])) {
      ctx.add("dto.not-a-dto", `${describeClass(cls)}'s ${field} must be a DTO class built with Dto({ … }).`);
    }
  }
  if (typeof (cls.prototype as { run?: unknown }).run !== "function") {
    ctx.add("tool.no-run-method", `${describeClass(cls)} must implement run(input).`);
  }
  ctx.checkDeps(cls, [ctx.appClass, agent]);
  if (tm.options.channel === undefined) {
    if (tm.options.deadlines !== undefined) {
      ctx.add(
        "tool.deadlines-without-channel",
        `${describeClass(cls)} declares deadlines but no channel; deadlines are for calls that wait for an answer.`,
      );
    }
    return { cls, name: tm.options.name, options: tm.options, channel: undefined };
  }
  const use: ChannelUse = {
    cls: tm.options.channel,
    tool: cls,
    toolOptions: tm.options,
    chain: [ctx.appClass, agent, cls],
  };
  const channel = assembleChannel(ctx, use);
  const role = declaredDeadlines(tm.options.channel);
  const declared =
    role === undefined && tm.options.deadlines === undefined
      ? undefined
      : { ...role, ...tm.options.deadlines };
  const deadlines =
    channel === undefined
      ? undefined
      : assembleDeadlines(ctx, { use, channel, declared, chain: [tm.options.channel] });
  return {
    cls,
    name: tm.options.name,
    options: tm.options,
    channel,
    ...(deadlines === undefined ? {} : { deadlines }),
  };
}
