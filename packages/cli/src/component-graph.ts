import type { AnyClass } from "@agboss/core";
import { CliError } from "./cli-error.js";
import type { ReadComponent } from "./load-application.js";
import type { TypedKind } from "./types-options.js";

/** A type the generated file writes: a class's instance type, a type of core, or a core generic. */
export type TypeRef =
  | { readonly kind: "class"; readonly target: AnyClass }
  | { readonly kind: "core"; readonly name: "ToolCallApprovalDecisionDto" }
  | { readonly kind: "reply-input"; readonly arguments: TypeRef };

/** A component class and the exact types its phantom declares. */
export interface TypedComponent {
  readonly target: AnyClass;
  readonly kind: TypedKind;
  readonly input: TypeRef;
  readonly output: TypeRef;
}

const DECISION: TypeRef = { kind: "core", name: "ToolCallApprovalDecisionDto" };

/**
 * Walks an application's components the way assembly does — workflows, their flows' agents, the
 * agents' tools, the tools' channel roles, the roles the providers' channels implement, the roles'
 * reply interpreters — and gives each workflow start (its input DTO, and its finish's output DTO for
 * `app.execute`), tool, channel role and reply interpreter its types. Each class
 * appears once, in the order it was reached. A concrete channel a tool names as is gets none: it is
 * usually a library's class, shared by tools of any input.
 */
export function typedComponents(application: AnyClass, componentOf: ReadComponent): TypedComponent[] {
  const found = new Map<AnyClass, TypedComponent>();
  const visited = new Set<AnyClass>();
  const problems: string[] = [];

  const options = (target: unknown, kind: string): Record<string, unknown> | undefined => {
    const meta = componentOf(target);
    return meta?.kind === kind ? (meta.options as Record<string, unknown>) : undefined;
  };
  const classes = (value: unknown): AnyClass[] =>
    Array.isArray(value) ? value.filter((item): item is AnyClass => typeof item === "function") : [];
  const dto = (owner: AnyClass, field: string, value: unknown): TypeRef | undefined => {
    if (typeof value === "function") return { kind: "class", target: value as AnyClass };
    problems.push(`${owner.name}: its ${field} is not a DTO class.`);
    return undefined;
  };

  const role = (target: AnyClass): void => {
    if (visited.has(target)) return;
    visited.add(target);
    const declared = options(target, "channel-role");
    if (declared === undefined) return;
    // An approval role asks about `approves` and is answered by a decision; a question role asks
    // about `ask` and is answered by its `answer` DTO.
    const question = declared.approves === undefined && declared.ask !== undefined;
    const approves = question ? dto(target, "ask", declared.ask) : dto(target, "approves", declared.approves);
    const answer = question ? dto(target, "answer", declared.answer) : DECISION;
    if (approves === undefined || answer === undefined) return;
    found.set(target, { target, kind: "channel-role", input: approves, output: answer });
    const interpreter = declared.replyInterpreter;
    if (typeof interpreter === "function" && options(interpreter, "reply-interpreter") !== undefined) {
      const cls = interpreter as AnyClass;
      if (!found.has(cls))
        found.set(cls, {
          target: cls,
          kind: "reply-interpreter",
          input: { kind: "reply-input", arguments: approves },
          output: answer,
        });
    }
  };

  /** The nearest ancestor (or the class itself) declared with `@ChannelRole`. */
  const roleOf = (target: AnyClass): AnyClass | undefined => {
    for (let cls: unknown = target; typeof cls === "function"; cls = Object.getPrototypeOf(cls)) {
      if (options(cls, "channel-role") !== undefined) return cls as AnyClass;
    }
    return undefined;
  };

  const tool = (target: AnyClass): void => {
    if (visited.has(target)) return;
    visited.add(target);
    const declared = options(target, "tool");
    if (declared === undefined) return;
    const input = dto(target, "input", declared.input);
    const output = dto(target, "output", declared.output);
    if (input !== undefined && output !== undefined)
      found.set(target, { target, kind: "tool", input, output });
    const channel = declared.channel;
    if (typeof channel !== "function") return;
    const channelRole = roleOf(channel as AnyClass);
    if (channelRole !== undefined) role(channelRole);
  };

  const agent = (target: AnyClass): void => {
    if (visited.has(target)) return;
    visited.add(target);
    for (const t of classes(options(target, "agent")?.tools)) tool(t);
  };

  /** A flow's start: `app.execute(Start, input)` takes its input DTO and returns its finish's output DTO. */
  const workflowStart = (flow: { start?: unknown; finish?: unknown }): void => {
    if (typeof flow.start !== "function" || typeof flow.finish !== "function") return;
    const target = flow.start as AnyClass;
    if (visited.has(target)) return;
    visited.add(target);
    const started = options(target, "workflow-start");
    const finished = options(flow.finish, "workflow-finish");
    if (started === undefined || finished === undefined) return;
    const input = dto(target, "input", started.input);
    const output = dto(flow.finish as AnyClass, "output", finished.output);
    if (input !== undefined && output !== undefined)
      found.set(target, { target, kind: "workflow-start", input, output });
  };

  const workflow = (target: AnyClass): void => {
    if (visited.has(target)) return;
    visited.add(target);
    const flows = options(target, "workflow")?.flow;
    for (const flow of Array.isArray(flows) ? flows : []) {
      workflowStart(flow as { start?: unknown; finish?: unknown });
      const steps = (flow as { steps?: unknown }).steps;
      for (const step of Array.isArray(steps) ? steps : []) {
        // an agent step, or a parallel launch's agents (one branch each, or one per item)
        const { agent: stepAgent, agents } = step as { agent?: unknown; agents?: unknown };
        if (typeof stepAgent === "function") agent(stepAgent as AnyClass);
        for (const branch of classes(agents)) agent(branch);
      }
    }
  };

  const declared = options(application, "application");
  if (declared === undefined) throw new CliError(`${application.name} is not an @Application class.`);
  for (const w of classes(declared.workflows)) workflow(w);
  const providers = Array.isArray(declared.providers) ? (declared.providers as unknown[]) : [];
  for (const provider of providers) {
    const cls =
      typeof provider === "function" ? provider : (provider as { useClass?: unknown } | null)?.useClass;
    if (typeof cls !== "function") continue;
    const channelRole = roleOf(cls as AnyClass);
    if (channelRole !== undefined) role(channelRole);
  }
  if (problems.length > 0) throw new CliError(problems.join("\n"));
  return [...found.values()];
}
