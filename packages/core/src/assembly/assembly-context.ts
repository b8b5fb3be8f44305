import { NAME_SUFFIX } from "../container/component-kind.js";
import { type AnyClass, componentOf } from "../container/component-registry.js";
import type { Container } from "../container/container.js";
import type { AssemblyViolation } from "../errors/assembly-error.js";
import { type ModelProviderOptions, servesModel } from "../models/model-provider.js";
import type { AssembledAgent } from "./assembled-application.js";

/** A model provider the container holds, with its decorator's options. */
export interface FoundModelProvider {
  readonly cls: AnyClass;
  readonly options: ModelProviderOptions;
}

/**
 * What every check of one assembly shares: the broken rules found so far, the names and classes already
 * seen, and what was built. Checks report each broken rule with {@link AssemblyContext.add} and go on, so
 * that assembly can throw them all together at the end.
 * @internal
 */
export class AssemblyContext {
  /** Every broken rule reported, in the order found (duplicates are dropped only when thrown). */
  readonly violations: AssemblyViolation[] = [];
  /** The model providers the container holds; agents and interpreters check their models against them. */
  readonly modelProviders: FoundModelProvider[] = [];
  /** The agents assembled so far: an agent used by several steps is assembled (and checked) once. */
  readonly agents = new Map<AnyClass, AssembledAgent>();
  /** The classes whose dependencies were checked; the rest of the container is checked at the end. */
  readonly checked = new Set<AnyClass>();
  /** Which role each reply interpreter was first seen on: one interpreter belongs to one role. */
  readonly interpreterOwners = new Map<AnyClass, AnyClass>();
  /** Each component's class by `kind:name`, to find two components of one kind with one name. */
  readonly #names = new Map<string, AnyClass>();

  constructor(
    readonly appClass: AnyClass,
    readonly container: Container,
    /** When true, every model id counts as served (a test kit scripts the models). */
    readonly modelsScripted: boolean,
  ) {}

  /** Reports a broken rule. */
  add(rule: string, message: string): void {
    this.violations.push({ rule, message });
  }

  /** Whether some model provider serves `modelId` (always, when the models are scripted). */
  isServed(modelId: string): boolean {
    return this.modelsScripted || this.modelProviders.some((p) => servesModel(p.options.serves, modelId));
  }

  /** Checks a component's name: it ends with its kind's suffix, and no other component of its kind has it. */
  checkName(cls: AnyClass): void {
    const m = componentOf<{ name?: unknown }>(cls);
    if (m === undefined || typeof m.options.name !== "string") return;
    const name = m.options.name;
    const suffix = NAME_SUFFIX[m.kind];
    if (suffix !== undefined && !name.endsWith(suffix)) {
      const article = /^[aeiou]/.test(m.kind) ? "an" : "a";
      this.add(
        "name.kind-suffix",
        `${cls.name} is ${article} ${m.kind} named "${name}": ${article} ${m.kind}'s name must end with "${suffix}".`,
      );
    }
    const key = `${m.kind}:${name}`;
    const other = this.#names.get(key);
    if (other !== undefined && other !== cls) {
      this.add(
        "name.duplicate",
        `${other.name} and ${cls.name} are both ${m.kind}s named "${name}"; give each its own name.`,
      );
    }
    this.#names.set(key, cls);
  }

  /**
   * Registers `cls` in the container when it is not there yet, and checks that the container can provide
   * everything it depends on; `chain` is how assembly reached it, for the messages.
   */
  checkDeps(cls: AnyClass, chain: readonly unknown[]): void {
    this.checked.add(cls);
    if (!this.container.has(cls)) this.container.register(cls);
    this.checkProviders(cls, chain);
  }

  /** Checks that the container can provide what `cls` depends on, without registering it. */
  checkProviders(cls: AnyClass, chain: readonly unknown[]): void {
    for (const problem of this.container.check(cls, chain)) {
      this.add("container.missing-provider", problem.message);
    }
  }

  /** The violations reported, each rule and message once, in the order first found. */
  uniqueViolations(): AssemblyViolation[] {
    const all = this.violations;
    return all.filter((v, i) => all.findIndex((w) => w.rule === v.rule && w.message === v.message) === i);
  }
}
