import type { ChannelOptions, ChannelRoleOptions } from "../channels/channel-decorators.js";
import type { AgentOptions } from "../components/agent.js";
import type { ApplicationOptions } from "../components/application.js";
import type { ToolOptions } from "../components/tool.js";
import type { WorkflowFinishOptions, WorkflowOptions, WorkflowStartOptions } from "../components/workflow.js";
import { ComponentKind, NAME_SUFFIX } from "../container/component-kind.js";
import {
  type AnyClass,
  componentOf,
  componentOfKind,
  describeClass,
} from "../container/component-registry.js";
import type { Container } from "../container/container.js";
import { type DtoClass, isDtoClass } from "../dto/dto.js";
import { AssemblyError, type AssemblyViolation } from "../errors/assembly-error.js";
import { quorumProblems } from "../flow/quorum-problems.js";
import { DecidedBy, type ReplyInterpreterOptions } from "../interpreters/reply-interpreter.js";
import { decidesModel, type ModelProviderOptions, servesModel } from "../models/model-provider.js";
import { PauseAnswerer } from "../pauses/pause-status.js";
import type {
  AssembledAgent,
  AssembledApplication,
  AssembledChannel,
  AssembledFlow,
  AssembledStep,
  AssembledTool,
} from "./assembled-application.js";

/** Options that change what assembly checks. */
export interface AssembleOptions {
  /** When true, every model id counts as served (a test kit scripts the models). */
  readonly modelsScripted?: boolean;
}

/**
 * Checks the whole application and builds what the runtime runs. Every broken rule is collected and
 * thrown together as one {@link AssemblyError}.
 * @internal
 */
export function assemble(
  appClass: AnyClass,
  container: Container,
  options: AssembleOptions = {},
): AssembledApplication {
  const violations: AssemblyViolation[] = [];
  const add = (rule: string, message: string) => violations.push({ rule, message });
  const meta = componentOfKind<ApplicationOptions>(appClass, ComponentKind.Application);
  if (meta === undefined) {
    throw new AssemblyError(describeClass(appClass), [
      {
        rule: "application.not-an-application",
        message: `${describeClass(appClass)} has no @Application({ … }) decorator.`,
      },
    ]);
  }
  const app = meta.options;
  const names = new Map<string, AnyClass>();
  const checkName = (cls: AnyClass) => {
    const m = componentOf<{ name?: unknown }>(cls);
    if (m === undefined || typeof m.options.name !== "string") return;
    const name = m.options.name;
    const suffix = NAME_SUFFIX[m.kind];
    if (suffix !== undefined && !name.endsWith(suffix)) {
      const article = /^[aeiou]/.test(m.kind) ? "an" : "a";
      add(
        "name.kind-suffix",
        `${cls.name} is ${article} ${m.kind} named "${name}": ${article} ${m.kind}'s name must end with "${suffix}".`,
      );
    }
    const key = `${m.kind}:${name}`;
    const other = names.get(key);
    if (other !== undefined && other !== cls) {
      add(
        "name.duplicate",
        `${other.name} and ${cls.name} are both ${m.kind}s named "${name}"; give each its own name.`,
      );
    }
    names.set(key, cls);
  };
  checkName(appClass);

  const modelProviders: { cls: AnyClass; options: ModelProviderOptions }[] = [];
  for (const token of container.tokens()) {
    const pm = componentOfKind<ModelProviderOptions>(token, ComponentKind.ModelProvider);
    if (pm !== undefined) {
      checkName(pm.target);
      modelProviders.push({ cls: pm.target, options: pm.options });
      if (typeof (pm.target.prototype as { chatModel?: unknown }).chatModel !== "function") {
        add("model-provider.no-chat-model-method", `${pm.target.name} must implement chatModel(modelId).`);
      }
    }
  }

  const agents = new Map<AnyClass, AssembledAgent>();
  const checked = new Set<AnyClass>();
  const checkDeps = (cls: AnyClass, chain: readonly unknown[]) => {
    checked.add(cls);
    if (!container.has(cls)) container.register(cls);
    for (const problem of container.check(cls, chain)) add("container.missing-provider", problem.message);
  };
  const assembleTool = (cls: AnyClass, agent: AnyClass): AssembledTool | undefined => {
    const tm = componentOfKind<ToolOptions>(cls, ComponentKind.Tool);
    if (tm === undefined) {
      add(
        "agent.not-a-tool",
        `${describeClass(agent)} lists ${describeClass(cls)} in tools, but it has no @Tool({ … }) decorator.`,
      );
      return undefined;
    }
    checkName(cls);
    for (const field of ["input", "output"] as const) {
      if (!isDtoClass(tm.options[field])) {
        add("dto.not-a-dto", `${describeClass(cls)}'s ${field} must be a DTO class built with Dto({ … }).`);
      }
    }
    if (typeof (cls.prototype as { run?: unknown }).run !== "function") {
      add("tool.no-run-method", `${describeClass(cls)} must implement run(input).`);
    }
    checkDeps(cls, [appClass, agent]);
    const channel =
      tm.options.channel === undefined
        ? undefined
        : assembleChannel(tm.options.channel, cls, tm.options, [appClass, agent, cls]);
    return { cls, name: tm.options.name, options: tm.options, channel };
  };
  const interpreterOwners = new Map<AnyClass, AnyClass>();
  const checkInterpreter = (
    interpreter: AnyClass,
    role: AnyClass,
    answer: DtoClass | undefined,
    chain: readonly unknown[],
  ) => {
    const im = componentOfKind<ReplyInterpreterOptions>(interpreter, ComponentKind.ReplyInterpreter);
    if (im === undefined) {
      add(
        "reply-interpreter.not-an-interpreter",
        `${describeClass(role)} names ${describeClass(interpreter)} as its replyInterpreter, but it has no @ReplyInterpreter({ … }) decorator.`,
      );
      return;
    }
    const owner = interpreterOwners.get(interpreter);
    if (owner !== undefined && owner !== role) {
      add(
        "channel.shared-interpreter",
        `${describeClass(interpreter)} is the replyInterpreter of both ${describeClass(owner)} and ${describeClass(role)}; one interpreter belongs to one role: give each role its own.`,
      );
    }
    interpreterOwners.set(interpreter, role);
    if (owner !== undefined) return;
    checkName(interpreter);
    if (im.options.decidedBy === DecidedBy.Code) {
      if (typeof (interpreter.prototype as { interpret?: unknown }).interpret !== "function") {
        add(
          "reply-interpreter.no-interpret-method",
          `${describeClass(interpreter)} is decided by code but has no interpret(input) method; implement ReplyInterpreterHandler<${interpreter.name}>.`,
        );
      }
      checkDeps(interpreter, [...chain, role]);
    } else if (im.options.decidedBy === DecidedBy.Model) {
      const modelId = im.options.model;
      if (modelId === undefined || modelId === "") {
        add(
          "reply-interpreter.no-model",
          `${describeClass(interpreter)} is decided by a model but names none: add model: "<provider>/<model>".`,
        );
      } else if (
        !options.modelsScripted &&
        !modelProviders.some((p) => servesModel(p.options.serves, modelId))
      ) {
        add(
          "model.unserved",
          `${describeClass(interpreter)} uses model "${modelId}", which no @ModelProvider serves. Add a provider whose serves matches it to @Application({ providers }).`,
        );
      } else if (answer !== undefined && decidesModel(modelProviders, modelId)) {
        add(
          "reply-interpreter.decision-model",
          `${describeClass(interpreter)} reads replies for the question role ${describeClass(role)} with "${modelId}", a decision model: it can only say yes or no, but the answer must be a ${answer.name}. Give the interpreter a chat model (one its provider does not list in decides), or decide by code.`,
        );
      }
    } else {
      add(
        "reply-interpreter.decided-by",
        `${describeClass(interpreter)} must say decidedBy: DecidedBy.Code or DecidedBy.Model.`,
      );
    }
  };
  const assembleChannel = (
    cls: AnyClass,
    tool: AnyClass,
    toolOptions: ToolOptions,
    chain: readonly unknown[],
  ): AssembledChannel | undefined => {
    const role = componentOfKind<ChannelRoleOptions>(cls, ComponentKind.ChannelRole);
    const concrete = componentOfKind<ChannelOptions>(cls, ComponentKind.Channel);
    if (role === undefined && concrete === undefined) {
      add(
        "tool.channel-not-a-channel",
        `${describeClass(tool)} names channel ${describeClass(cls)}, which has neither @ChannelRole nor @Channel.`,
      );
      return undefined;
    }
    checkName(cls);
    if (role !== undefined) {
      const answeredBy = role.options.answeredBy as string | undefined;
      if (answeredBy !== PauseAnswerer.ThreadOwner && answeredBy !== PauseAnswerer.Channel) {
        add(
          "channel.no-answerer",
          `${describeClass(cls)} must say who may answer: @ChannelRole({ answeredBy: PauseAnswerer.ThreadOwner | PauseAnswerer.Channel }). There is no default.`,
        );
      }
      const { approves, ask, answer } = role.options as {
        approves?: DtoClass;
        ask?: DtoClass;
        answer?: DtoClass;
      };
      const question = ask !== undefined || answer !== undefined;
      if (approves !== undefined && question) {
        add(
          "channel.role-kind",
          `${describeClass(cls)} declares both approves and ask / answer; a role either approves calls (approves) or asks a question (ask + answer), not both.`,
        );
      } else if (question) {
        if (ask === undefined || answer === undefined) {
          add(
            "channel.role-kind",
            `${describeClass(cls)} is a question role but declares only ${ask === undefined ? "answer" : "ask"}; a question role needs both ask (the tool input it asks about) and answer (the DTO a person answers with).`,
          );
        }
        for (const [field, value] of [
          ["ask", ask],
          ["answer", answer],
        ] as const) {
          if (value !== undefined && !isDtoClass(value)) {
            add(
              "dto.not-a-dto",
              `${describeClass(cls)}'s ${field} must be a DTO class built with Dto({ … }).`,
            );
          }
        }
        if (ask !== undefined && ask !== toolOptions.input) {
          add(
            "channel.ask-mismatch",
            `${describeClass(tool)} takes ${toolOptions.input.name} but its channel ${describeClass(cls)} asks about ${ask.name}; name a question role whose ask is the tool's input.`,
          );
        }
      } else if (approves !== toolOptions.input) {
        add(
          "channel.approves-mismatch",
          `${describeClass(tool)} takes ${toolOptions.input.name} but its channel ${describeClass(cls)} approves ${approves?.name ?? "nothing"}; name a role that approves the tool's input${approves === undefined ? " (or declare ask and answer for a question role)" : ""}.`,
        );
      }
      for (const problem of container.check(cls, chain)) add("container.missing-provider", problem.message);
      const interpreter = role.options.replyInterpreter;
      if (interpreter !== undefined) checkInterpreter(interpreter, cls, question ? answer : undefined, chain);
      return {
        cls,
        name: role.options.name,
        answeredBy: role.options.answeredBy,
        replyInterpreter: role.options.replyInterpreter,
        answer: question && approves === undefined ? answer : undefined,
      };
    }
    checkDeps(cls, chain);
    return {
      cls,
      name: (concrete as NonNullable<typeof concrete>).options.name,
      answeredBy: PauseAnswerer.ThreadOwner,
      replyInterpreter: undefined,
      answer: undefined,
    };
  };
  const assembleAgent = (cls: AnyClass): AssembledAgent | undefined => {
    const existing = agents.get(cls);
    if (existing !== undefined) return existing;
    const am = componentOfKind<AgentOptions>(cls, ComponentKind.Agent);
    if (am === undefined) {
      add(
        "flow.not-an-agent",
        `${describeClass(cls)} is used with toAgent(…) but has no @Agent({ … }) decorator.`,
      );
      return undefined;
    }
    checkName(cls);
    const tools = new Map<string, AssembledTool>();
    for (const toolClass of am.options.tools ?? []) {
      const tool = assembleTool(toolClass, cls);
      if (tool !== undefined) tools.set(tool.name, tool);
    }
    if (am.options.output !== undefined && !isDtoClass(am.options.output)) {
      add("dto.not-a-dto", `${describeClass(cls)}'s output must be a DTO class built with Dto({ … }).`);
    }
    if (
      !options.modelsScripted &&
      !modelProviders.some((p) => servesModel(p.options.serves, am.options.model))
    ) {
      const known = modelProviders
        .map((p) => `${p.options.name} serves ${p.options.serves.join(", ")}`)
        .join("; ");
      add(
        "model.unserved",
        `${describeClass(cls)} uses model "${am.options.model}", which no @ModelProvider serves` +
          `${known === "" ? " (the application has none)" : ` (${known})`}. Add a provider whose serves matches it to @Application({ providers }).`,
      );
    }
    const agent: AssembledAgent = { cls, name: am.options.name, options: am.options, tools };
    agents.set(cls, agent);
    return agent;
  };

  const flows = new Map<AnyClass, AssembledFlow>();
  const childRefs: { parent: AnyClass; child: AnyClass }[] = [];
  for (const wfClass of app.workflows ?? []) {
    const wm = componentOfKind<WorkflowOptions>(wfClass, ComponentKind.Workflow);
    if (wm === undefined) {
      add(
        "workflow.not-a-workflow",
        `${describeClass(wfClass)} is listed in workflows but has no @Workflow({ … }) decorator.`,
      );
      continue;
    }
    checkName(wfClass);
    for (const flow of wm.options.flow) {
      const sm = componentOfKind<WorkflowStartOptions>(flow.start, ComponentKind.WorkflowStart);
      const fm = componentOfKind<WorkflowFinishOptions>(flow.finish, ComponentKind.WorkflowFinish);
      if (sm === undefined)
        add(
          "flow.not-a-start",
          `${describeClass(flow.start)} begins a flow of ${wm.options.name} but has no @WorkflowStart.`,
        );
      else {
        checkName(flow.start);
        if (!isDtoClass(sm.options.input))
          add("dto.not-a-dto", `${describeClass(flow.start)}'s input must be a DTO class.`);
        else if (flow.returns !== undefined && flow.returns !== sm.options.input) {
          add(
            "flow.returns-mismatch",
            `${wm.options.name}: start(${flow.start.name}).returns(${flow.returns.name}) but the start's input is ${sm.options.input.name}.`,
          );
        }
        if (flows.has(flow.start))
          add(
            "flow.duplicate-start",
            `${describeClass(flow.start)} begins two flows; give each flow its own start.`,
          );
      }
      if (fm === undefined)
        add(
          "flow.not-a-finish",
          `${describeClass(flow.finish)} ends a flow of ${wm.options.name} but has no @WorkflowFinish.`,
        );
      else {
        checkName(flow.finish);
        if (!isDtoClass(fm.options.output))
          add("dto.not-a-dto", `${describeClass(flow.finish)}'s output must be a DTO class.`);
      }
      if (flow.steps.length === 0)
        add(
          "flow.no-steps",
          `A flow of ${wm.options.name} goes from start to finish with no step; add toAgent(…).`,
        );
      const steps: AssembledStep[] = [];
      const seen = new Map<string, number>();
      let launches = 0;
      for (const step of flow.steps) {
        if (step.kind === "workflow") {
          const childName = componentOf<{ name?: string }>(step.start)?.options.name ?? step.start.name;
          const count = (seen.get(`workflow:${childName}`) ?? 0) + 1;
          seen.set(`workflow:${childName}`, count);
          childRefs.push({ parent: flow.start, child: step.start });
          steps.push({
            kind: "workflow",
            nodeId: count === 1 ? `workflow/${childName}` : `workflow/${childName}#${count}`,
            start: step.start,
          });
          continue;
        }
        if (step.kind === "parallel") {
          launches += 1;
          const agents = step.agents
            .map((a) => assembleAgent(a))
            .filter((a): a is AssembledAgent => a !== undefined);
          const workflows = step.workflows ?? [];
          for (const child of workflows) childRefs.push({ parent: flow.start, child });
          if (step.agents.length === 0 && workflows.length === 0)
            add("flow.empty-launch", `A parallel launch of ${wm.options.name} has no branches.`);
          const max = step.options.maxConcurrency;
          if (max !== undefined && (!Number.isInteger(max) || max < 1)) {
            add(
              "flow.max-concurrency",
              `A parallel launch of ${wm.options.name} has maxConcurrency ${String(max)}; use a whole number of at least 1.`,
            );
          }
          // A quorum's max is checked against the branch count when it is known before running (not per item).
          const known = step.items === undefined && step.agents.length > 0 ? step.agents.length : undefined;
          for (const problem of step.quorum === undefined ? [] : quorumProblems(step.quorum, known))
            add("flow.quorum", `A parallel launch of ${wm.options.name}: ${problem}`);
          if (agents.length === step.agents.length) {
            steps.push({
              kind: "parallel",
              nodeId: `launch/${launches}`,
              agents,
              workflows,
              items: step.items,
              options: step.options,
              quorum: step.quorum,
              onJoinError: step.onJoinError,
            });
          }
          continue;
        }
        const agent = assembleAgent(step.agent);
        if (agent === undefined) continue;
        const count = (seen.get(agent.name) ?? 0) + 1;
        seen.set(agent.name, count);
        steps.push({
          kind: "agent",
          agent,
          nodeId: count === 1 ? `agent/${agent.name}` : `agent/${agent.name}#${count}`,
        });
      }
      if (sm !== undefined && fm !== undefined) {
        flows.set(flow.start, {
          workflow: { cls: wfClass, name: wm.options.name, version: wm.options.version },
          start: { cls: flow.start, name: sm.options.name, input: sm.options.input },
          steps,
          finish: { cls: flow.finish, name: fm.options.name, output: fm.options.output },
        });
      }
    }
  }
  for (const { parent, child } of childRefs) {
    if (!flows.has(child)) {
      add(
        "flow.unknown-child",
        `${describeClass(parent)}'s flow runs ${describeClass(child)} as a child workflow, but no workflow of the application begins with it; add its workflow to @Application({ workflows }).`,
      );
    }
  }
  const childrenOf = (start: AnyClass) => childRefs.filter((r) => r.parent === start).map((r) => r.child);
  const reported = new Set<AnyClass>();
  const walk = (start: AnyClass, path: readonly AnyClass[]) => {
    if (path.includes(start)) {
      if (!reported.has(start)) {
        reported.add(start);
        add(
          "flow.child-cycle",
          `Child workflows run in a circle: ${[...path, start].map((c) => c.name).join(" → ")}. A flow cannot run itself.`,
        );
      }
      return;
    }
    for (const child of childrenOf(start)) walk(child, [...path, start]);
  };
  for (const start of flows.keys()) walk(start, []);
  if ((app.workflows ?? []).length === 0)
    add("application.no-workflows", `${describeClass(appClass)} lists no workflows.`);
  checkDeps(appClass, []);
  for (const token of container.tokens()) {
    if (typeof token === "function" && !checked.has(token)) {
      for (const problem of container.check(token, [appClass]))
        add("container.missing-provider", problem.message);
    }
  }

  const unique = violations.filter(
    (v, i) => violations.findIndex((w) => w.rule === v.rule && w.message === v.message) === i,
  );
  if (unique.length > 0) throw new AssemblyError(app.name, unique);
  return { cls: appClass, name: app.name, options: app, flows, agents, modelProviders };
}
