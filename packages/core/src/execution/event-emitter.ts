import type { ExecutionFrame } from "../container/execution-context.js";
import { LogLevel } from "../logging/logger.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import type { ExecutionEvents } from "./execution-events.js";

/**
 * Calls the application's event methods (`onExecutionStart`, `onExecutionFinish`, …). A handler that
 * throws is logged (`app.event-handler-failed`) and never changes the execution.
 * @internal
 */
export class ExecutionEventEmitter {
  readonly #services: RuntimeServices;
  readonly #handlers: ExecutionEvents;

  constructor(services: RuntimeServices, handlers: ExecutionEvents) {
    this.#services = services;
    this.#handlers = handlers;
  }

  base(frame: ExecutionFrame) {
    return {
      tenantId: frame.tenant.tenantId,
      threadId: frame.threadId,
      executionId: frame.executionId,
      workflow: frame.workflow.name,
      at: new Date(this.#services.clock.now()).toISOString(),
    };
  }

  async emit<K extends keyof ExecutionEvents>(
    name: K,
    event: Parameters<NonNullable<ExecutionEvents[K]>>[0],
  ): Promise<void> {
    const handler = this.#handlers[name] as ((e: typeof event) => unknown) | undefined;
    if (handler === undefined) return;
    try {
      await handler.call(this.#handlers, event);
    } catch (error) {
      const { logger, clock } = this.#services;
      logger.log({
        level: LogLevel.Error,
        event: "app.event-handler-failed",
        message: `${name} threw: ${String(error)}`,
        fields: { handler: name },
        at: clock.now(),
      });
    }
  }
}
