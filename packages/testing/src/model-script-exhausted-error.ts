import { AgbossError, type AnyClass } from "@agboss/core";
import { componentLabel } from "./component-label.js";
import { TestingErrorCode } from "./testing-error-code.js";

/** A component asked its model for a turn past the end of its `mockLlm` script. */
export class ModelScriptExhaustedError extends AgbossError {
  static override readonly kind: string = "ModelScriptExhaustedError";

  /** The component whose script ran out. */
  readonly component: AnyClass;
  /** How many turns the script held (all of them used). */
  readonly scripted: number;

  constructor(args: { component: AnyClass; caller: string; scripted: number; cases: number }) {
    const cls = args.component.name || "TheComponent";
    const turns = `${args.scripted} turn${args.scripted === 1 ? "" : "s"}`;
    const cases =
      args.cases === 0
        ? ""
        : ` and none of its ${args.cases} .when(…) case${args.cases === 1 ? "" : "s"} matched with turns left`;
    super(
      TestingErrorCode.ModelScriptExhausted,
      `${componentLabel(args.component)} asked its model for turn ${args.scripted + 1} (as ${args.caller}), ` +
        `but mockLlm(${cls}) scripted only ${turns}${cases}. ` +
        `Add the turn with mockLlm(${cls}).thenReturn(…), or see why it asked again in mockLlm(${cls}).calls.`,
    );
    this.component = args.component;
    this.scripted = args.scripted;
  }
}
