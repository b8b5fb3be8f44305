import type { ComponentKind } from "./component-kind.js";

/** Any class, abstract or not. */
// biome-ignore lint/suspicious/noExplicitAny: constructor parameters of user classes are unknown here
export type AnyClass<T = unknown> = abstract new (...args: any[]) => T;

/** What a decorator recorded about a class. */
export interface ComponentMeta<TOptions = Record<string, unknown>> {
  readonly kind: ComponentKind;
  readonly target: AnyClass;
  readonly options: Readonly<TOptions>;
}

const REGISTRY = Symbol.for("agboss.component-registry");
type Registry = WeakMap<AnyClass, ComponentMeta>;
const globals = globalThis as { [REGISTRY]?: Registry };
// One registry per process, even when two copies of core are installed.
const registry: Registry = globals[REGISTRY] ?? new WeakMap();
globals[REGISTRY] = registry;

/** Records a component; a class decorated twice keeps the last declaration. */
export function registerComponent(target: AnyClass, kind: ComponentKind, options: object): void {
  registry.set(
    target,
    Object.freeze({ kind, target, options: Object.freeze({ ...options }) }) as ComponentMeta,
  );
}

/** The class's own declaration (not its parent's), or undefined. */
export function componentOf<TOptions = Record<string, unknown>>(
  target: unknown,
): ComponentMeta<TOptions> | undefined {
  return typeof target === "function"
    ? (registry.get(target as AnyClass) as ComponentMeta<TOptions> | undefined)
    : undefined;
}

/** The class's own declaration when it is of `kind`. */
export function componentOfKind<TOptions>(
  target: unknown,
  kind: ComponentKind,
): ComponentMeta<TOptions> | undefined {
  const meta = componentOf<TOptions>(target);
  return meta?.kind === kind ? meta : undefined;
}

/** A readable name for a class in messages: its component name, else its class name. */
export function describeClass(target: unknown): string {
  const meta = componentOf<{ name?: unknown }>(target);
  const className = typeof target === "function" ? target.name || "(anonymous class)" : String(target);
  return typeof meta?.options.name === "string" ? `${className} ("${meta.options.name}")` : className;
}

/**
 * A class decorator that only registers. It works both as a TC39 decorator (`(value, context)`) and
 * under `experimentalDecorators` (`(target)`), and returns nothing so the class stays as written.
 */
export function componentDecorator(kind: ComponentKind, options: object) {
  return <TClass extends AnyClass>(target: TClass, _context?: ClassDecoratorContext): void => {
    registerComponent(target, kind, options);
  };
}
