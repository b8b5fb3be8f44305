import { ExecutionContext } from "../container/execution-context.js";
import { NoExecutionContextError } from "../errors/runtime-errors.js";

/** Zod issues as one line the model (or a person) can read: `path: message; …`. @internal */
export function issuesText(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .map((i) => `${i.path.length === 0 ? "(value)" : i.path.map(String).join(".")}: ${i.message}`)
    .join("; ");
}

/** The execution frame the node runs in; a node outside any frame is a bug in the runtime. @internal */
export function currentFrame() {
  const frame = ExecutionContext.current();
  if (frame === undefined)
    throw new NoExecutionContextError("frame (an agent node ran outside an execution)");
  return frame;
}
