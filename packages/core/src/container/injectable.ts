import { ComponentKind } from "./component-kind.js";
import { componentDecorator } from "./component-registry.js";

/** What `@Injectable` declares. */
export interface InjectableOptions {
  /** What the constructor takes, in order. */
  readonly deps?: readonly unknown[];
}

/**
 * Declares a service the container creates with its `deps`. A class with no constructor parameters
 * needs no decorator.
 *
 * @example
 * @Injectable({ deps: [SlackClient] })
 * export class SlackService { constructor(private readonly slack: SlackClient) {} }
 */
export function Injectable(options: InjectableOptions = {}) {
  return componentDecorator(ComponentKind.Injectable, options);
}
