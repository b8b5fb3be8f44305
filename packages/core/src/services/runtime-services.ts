import type { AssembledApplication } from "../assembly/assembled-application.js";
import type { AnyClass } from "../container/component-registry.js";
import type { Container } from "../container/container.js";
import type { Logger } from "../logging/logger.js";
import type { ModelRegistry } from "../models/model-registry.js";
import type { Store } from "../store/store.js";
import type { Clock } from "../time/clock.js";
import type { Tracing } from "./tracing.js";

/** What the graph's nodes need from the application. @internal */
export interface RuntimeServices {
  readonly container: Container;
  readonly models: ModelRegistry;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: Store;
  readonly assembled: AssembledApplication;
  readonly env: string;
  /** Each reply interpreter's instructions with its `promptUrls` read, when it has any. */
  readonly interpreterPrompts?: ReadonlyMap<AnyClass, string> | undefined;
  /** OpenTelemetry spans, when `@opentelemetry/api` is installed; undefined otherwise. */
  readonly tracing?: Tracing | undefined;
  /** The process-local bus `app.follow` hears this process's passes on (`Followers`). */
  readonly followers?: FollowerBus | undefined;
}

/**
 * What a pass tells the followers of its tree in this process, keyed by tenant and root execution;
 * `pauseKey` is the id of the pause a pause's event is about. @internal
 */
export interface FollowerBus {
  watching(tenantId: string, rootExecutionId: string): boolean;
  listen(
    tenantId: string,
    rootExecutionId: string,
    listener: (event: { readonly type: string }, pauseKey: string | undefined) => void,
  ): () => void;
  publish(
    tenantId: string,
    rootExecutionId: string,
    event: { readonly type: string },
    pauseKey?: string,
  ): void;
}
