import type { AnyClass } from "./component-registry.js";

/** What the container can be asked for: a class (concrete or abstract), or a token made with {@link InjectionToken}. */
export type Token<T = unknown> = AnyClass<T> | InjectionToken<T>;

/** A named token for a value that is not a class (a config object, a client from a library). */
export class InjectionToken<T = unknown> {
  declare readonly __type?: T;
  constructor(readonly description: string) {}
  toString(): string {
    return `InjectionToken(${this.description})`;
  }
}

/** How the container gets an instance. */
export type Provider =
  | AnyClass
  | { readonly provide: Token; readonly useValue: unknown }
  | { readonly provide: Token; readonly useClass: AnyClass }
  | {
      readonly provide: Token;
      readonly useFactory: (...deps: never[]) => unknown;
      readonly deps?: readonly Token[];
    };

/** Lifecycle hooks the container calls on the instances it created. */
export interface OnInit {
  /** After construction, dependencies first. */
  onInit(): void | Promise<void>;
}
/** Called once every instance is initialised, before the application takes work. */
export interface OnStart {
  onStart(): void | Promise<void>;
}
/** Called on `app.close()`, in reverse creation order. */
export interface OnStop {
  onStop(): void | Promise<void>;
}

/** A token's readable name. */
export function tokenName(token: unknown): string {
  if (token instanceof InjectionToken) return token.toString();
  if (typeof token === "function") return token.name || "(anonymous class)";
  return String(token);
}
