import type { Budget } from "../budgets/budget.js";
import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentDecorator } from "../container/component-registry.js";
import type { Provider } from "../container/provider.js";
import type { PiiPolicy } from "../pii/pii-policy.js";
import type { StoreFactory } from "../store/store.js";
import type { Duration } from "../time/duration.js";

/** What `@Application` declares. */
export interface ApplicationOptions {
  /** Ends with `-application`. */
  readonly name: string;
  readonly description?: string;
  /** The workflows `app.execute` can start. */
  readonly workflows: readonly AnyClass[];
  /** Services, channel implementations and model providers the container creates. */
  readonly providers?: readonly Provider[];
  /** What the application class's own constructor takes. */
  readonly deps?: readonly unknown[];
  /** The store; `createApp(App, { store })` overrides it. Default: the embedded SQLite store. */
  readonly store?: StoreFactory;
  /** How long a resolved pause record is kept before the sweep removes it. Default `hours(24)`. */
  readonly pauseRecordRetention?: Duration;
  /** Limits on every model call of the application, built with `budget({ … })`. */
  readonly budgets?: readonly Budget[];
  /** What every model of the application may read, e.g. `replaceWithToken(PiiDetector.sensitiveFields())`. */
  readonly piiPolicies?: readonly PiiPolicy[];
}

/**
 * Declares an application: its workflows and the providers its container creates. Methods named
 * `onExecutionStart`, `onExecutionFinish`, `onExecutionError`, `onExecutionPause` and `onExecutionResume`
 * on the class receive execution events.
 *
 * @example
 * @Application({ name: "refund-application", workflows: [RefundWorkflow], providers: [OpenRouterModelProvider] })
 * export class RefundApplication {}
 */
export function Application(options: ApplicationOptions) {
  return componentDecorator(ComponentKind.Application, options);
}
