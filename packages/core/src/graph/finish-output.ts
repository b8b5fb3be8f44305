import type { AssembledFlow } from "../assembly/assembled-application.js";
import { parseDto } from "../dto/dto.js";
import { StepFailedError } from "../errors/step-failed-error.js";
import type { FlowStateValue } from "./flow-state.js";

/** Where a failing finish is reported as having failed. */
export const FINISH_NODE = "finish";

/**
 * A finished flow's state with its output set: the last step's output validated against the finish's
 * DTO (a `StepFailedError` when it does not fit).
 * @internal
 */
export function finishOutput(flow: AssembledFlow, state: FlowStateValue): FlowStateValue {
  const last = flow.steps.at(-1);
  const value = last === undefined ? state.run.input : state.run.outputs[last.nodeId];
  try {
    const output = parseDto(flow.finish.output, value, `the output of ${flow.finish.name}`);
    return { ...state, run: { ...state.run, output } };
  } catch (error) {
    throw new StepFailedError(
      FINISH_NODE,
      `The flow's last step produced no valid ${flow.finish.output.name}.`,
      {
        cause: error,
      },
    );
  }
}
