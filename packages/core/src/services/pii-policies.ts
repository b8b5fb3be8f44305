import type { AssembledApplication } from "../assembly/assembled-application.js";
import type { WorkflowOptions } from "../components/workflow.js";
import { componentOf } from "../container/component-registry.js";
import type { PiiPolicy } from "../pii/pii-policy.js";

/** The PII policies over a workflow's executions: the application's, then the workflow's own. @internal */
export function piiPoliciesOf(assembled: AssembledApplication, workflow: string): readonly PiiPolicy[] {
  const own = assembled.options.piiPolicies ?? [];
  const flow = [...assembled.flows.values()].find((f) => f.workflow.name === workflow);
  const theirs =
    flow === undefined ? undefined : componentOf<WorkflowOptions>(flow.workflow.cls)?.options.piiPolicies;
  return theirs === undefined || theirs.length === 0 ? own : [...own, ...theirs];
}
