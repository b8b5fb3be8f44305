import { type AnyClass, componentOf } from "./component-registry.js";
import { ExecutionContext } from "./execution-context.js";
import { AmbiguousProviderError, MissingProviderError } from "./missing-provider-error.js";
import { InjectionToken, type Provider, type Token, tokenName } from "./provider.js";

type Recipe =
  | { readonly kind: "value"; readonly value: unknown }
  | { readonly kind: "class"; readonly target: AnyClass }
  | {
      readonly kind: "factory";
      readonly factory: (...deps: never[]) => unknown;
      readonly deps: readonly Token[];
    };

/** The deps a class declared on its decorator. */
export function declaredDeps(target: AnyClass): readonly Token[] {
  const deps = componentOf<{ deps?: readonly Token[] }>(target)?.options.deps;
  return deps ?? [];
}

/**
 * The application's dependency-injection container: singletons, created eagerly with their declared
 * `deps`, dependencies first. A contract (an abstract class, a channel role) resolves to the one
 * registered provider that extends it.
 */
export class Container {
  readonly #recipes = new Map<Token, Recipe>();
  readonly #instances = new Map<Token, unknown>();
  /** Instances in creation order, for the lifecycle. */
  readonly #created: unknown[] = [];
  /**
   * The provider found for a contract (a token served by a subclass), kept so that a lookup on the hot
   * path (a channel resolved for each question asked) does not scan every recipe again. Emptied when a
   * provider is registered.
   */
  readonly #servedBy = new Map<Token, Token>();

  constructor(providers: readonly Provider[] = []) {
    this.#recipes.set(ExecutionContext, { kind: "value", value: new ExecutionContext() });
    for (const provider of providers) this.register(provider);
  }

  /** Adds a provider; a later one for the same token replaces an earlier one. */
  register(provider: Provider): void {
    this.#servedBy.clear();
    if (typeof provider === "function") {
      this.#recipes.set(provider, { kind: "class", target: provider });
    } else if ("useValue" in provider) {
      this.#recipes.set(provider.provide, { kind: "value", value: provider.useValue });
    } else if ("useClass" in provider) {
      this.#recipes.set(provider.provide, { kind: "class", target: provider.useClass });
    } else {
      this.#recipes.set(provider.provide, {
        kind: "factory",
        factory: provider.useFactory,
        deps: provider.deps ?? [],
      });
    }
  }

  /** True when `token` is registered itself (not through a subclass). */
  has(token: Token): boolean {
    return this.#recipes.has(token);
  }

  /** The registered token that serves `token`: itself, or the one provider class extending it. */
  #serving(token: Token): Token | undefined {
    if (this.#recipes.has(token)) return token;
    if (token instanceof InjectionToken || typeof token !== "function") return undefined;
    const known = this.#servedBy.get(token);
    if (known !== undefined) return known;
    const candidates = [...this.#recipes.entries()]
      .filter(([, r]) => r.kind === "class" && r.target !== token && r.target.prototype instanceof token)
      .map(([t]) => t);
    if (candidates.length > 1) throw new AmbiguousProviderError(token, candidates);
    const served = candidates[0];
    if (served !== undefined) this.#servedBy.set(token, served);
    return served;
  }

  /** The problems resolving `token` would hit, without creating anything: empty when it resolves. */
  check(token: Token, chain: readonly unknown[] = []): MissingProviderError[] {
    const problems: MissingProviderError[] = [];
    const visit = (
      t: Token,
      path: readonly unknown[],
      owner?: AnyClass,
      deps?: readonly Token[],
      index?: number,
    ) => {
      let served: Token | undefined;
      try {
        served = this.#serving(t);
      } catch {
        return; // ambiguity is reported by assembly rules
      }
      if (served === undefined) {
        problems.push(new MissingProviderError({ token: t, owner, deps, index, chain: [...path, t] }));
        return;
      }
      if (path.includes(served)) return;
      const recipe = this.#recipes.get(served);
      const target = recipe?.kind === "class" ? recipe.target : undefined;
      const nextDeps =
        target !== undefined ? declaredDeps(target) : recipe?.kind === "factory" ? recipe.deps : [];
      nextDeps.forEach((d, i) => {
        visit(d, [...path, served], target, nextDeps, i);
      });
    };
    visit(token, chain);
    return problems;
  }

  /** The singleton for `token`, created (with its deps) on first use. */
  get<T>(token: Token<T>, chain: readonly unknown[] = []): T {
    const served = this.#serving(token);
    if (served === undefined) {
      const owner = chain.at(-1);
      const deps = typeof owner === "function" ? declaredDeps(owner as AnyClass) : undefined;
      throw new MissingProviderError({
        token,
        owner,
        deps,
        index: deps?.indexOf(token),
        chain: [...chain, token],
      });
    }
    if (this.#instances.has(served)) return this.#instances.get(served) as T;
    if (chain.includes(served)) {
      throw new MissingProviderError({ token, chain: [...chain, token] });
    }
    const recipe = this.#recipes.get(served) as Recipe;
    const path = [...chain, served];
    let instance: unknown;
    if (recipe.kind === "value") instance = recipe.value;
    else if (recipe.kind === "factory")
      instance = recipe.factory(...(recipe.deps.map((d) => this.get(d, path)) as never[]));
    else {
      const deps = declaredDeps(recipe.target);
      const args = deps.map((d) => this.get(d, path));
      instance = new (recipe.target as unknown as new (...a: unknown[]) => unknown)(...args);
    }
    this.#instances.set(served, instance);
    if (recipe.kind !== "value" || served !== ExecutionContext) this.#created.push(instance);
    return instance as T;
  }

  /** Every token registered. */
  tokens(): Token[] {
    return [...this.#recipes.keys()];
  }

  /** Creates every registered provider, then calls `onInit` on each in creation order, then `onStart`. */
  async start(): Promise<void> {
    for (const token of this.#recipes.keys()) this.get(token);
    for (const instance of this.#created) await callHook(instance, "onInit");
    for (const instance of this.#created) await callHook(instance, "onStart");
  }

  /** Calls `onStop` on every created instance, newest first; every hook runs even if one throws. */
  async stop(): Promise<void> {
    const errors: unknown[] = [];
    for (const instance of [...this.#created].reverse()) {
      try {
        await callHook(instance, "onStop");
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, "Several onStop hooks failed");
  }

  /** A readable name for a token. */
  static nameOf(token: unknown): string {
    return tokenName(token);
  }
}

async function callHook(instance: unknown, hook: "onInit" | "onStart" | "onStop"): Promise<void> {
  if (typeof instance !== "object" || instance === null) return;
  const fn = (instance as Record<string, unknown>)[hook];
  if (typeof fn === "function") await fn.call(instance);
}
