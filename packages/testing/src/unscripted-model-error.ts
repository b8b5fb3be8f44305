import { AgbossError, type AnyClass } from "@agboss/core";
import { componentLabel } from "./component-label.js";
import { TestingErrorCode } from "./testing-error-code.js";

/**
 * A component called its model in a test that scripted none for it. Tests run with no model
 * providers: every model call must be scripted with `mockLlm(Component).thenReturn(…)`.
 */
export class UnscriptedModelError extends AgbossError {
  static override readonly kind: string = "UnscriptedModelError";

  /** The component that called its model. */
  readonly component: AnyClass;

  constructor(component: AnyClass, caller: string) {
    const cls = component.name || "TheComponent";
    super(
      TestingErrorCode.ModelUnscripted,
      `${componentLabel(component)} called its model (as ${caller}), but the test scripted no model turns for it. ` +
        `Script them before it runs, e.g. mockLlm(${cls}).thenReturn(callTool(SomeTool, { … }), replyWith("…")).`,
    );
    this.component = component;
  }
}
