import type { ApplicationOptions } from "../components/application.js";
import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentOfKind, describeClass } from "../container/component-registry.js";
import type { Container } from "../container/container.js";
import { AssemblyError } from "../errors/assembly-error.js";
import type { ModelProviderOptions } from "../models/model-provider.js";
import { assembleWorkflows } from "./assemble-flows.js";
import type { AssembledApplication } from "./assembled-application.js";
import { AssemblyContext } from "./assembly-context.js";

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
  const ctx = new AssemblyContext(appClass, container, options.modelsScripted === true);
  ctx.checkName(appClass);
  findModelProviders(ctx);
  // Agents, their tools, channels and interpreters are checked as the flows' steps reach them.
  const flows = assembleWorkflows(ctx, app.workflows ?? []);
  if ((app.workflows ?? []).length === 0)
    ctx.add("application.no-workflows", `${describeClass(appClass)} lists no workflows.`);
  checkContainer(ctx);
  const unique = ctx.uniqueViolations();
  if (unique.length > 0) throw new AssemblyError(app.name, unique);
  return {
    cls: appClass,
    name: app.name,
    options: app,
    flows,
    agents: ctx.agents,
    modelProviders: ctx.modelProviders,
  };
}

/** Finds the model providers the container holds and checks each (its name, its `chatModel` method). */
function findModelProviders(ctx: AssemblyContext): void {
  for (const token of ctx.container.tokens()) {
    const pm = componentOfKind<ModelProviderOptions>(token, ComponentKind.ModelProvider);
    if (pm !== undefined) {
      ctx.checkName(pm.target);
      ctx.modelProviders.push({ cls: pm.target, options: pm.options });
      if (typeof (pm.target.prototype as { chatModel?: unknown }).chatModel !== "function") {
        ctx.add(
          "model-provider.no-chat-model-method",
          `${pm.target.name} must implement chatModel(modelId).`,
        );
      }
    }
  }
}

/**
 * Checks the application's own dependencies, then those of every class in the container that no
 * earlier check reached (each is checked as a dependency of the application).
 */
function checkContainer(ctx: AssemblyContext): void {
  ctx.checkDeps(ctx.appClass, []);
  for (const token of ctx.container.tokens()) {
    if (typeof token === "function" && !ctx.checked.has(token)) ctx.checkProviders(token, [ctx.appClass]);
  }
}
