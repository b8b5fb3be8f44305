/** A component as records name it. */
export interface ComponentRecord {
  readonly kind: string;
  readonly name: string;
}

/** Where in a workflow something happened: the agent's visit, the tool call, the loop's counters. */
export interface StepRecord {
  readonly agent: ComponentRecord;
  /** The graph node. */
  readonly nodeId: string;
  /** Which visit of the node in this execution (1 for the first). */
  readonly visit: number;
  /** The branch copy of a parallel launch; undefined outside one. */
  readonly copy?: number | undefined;
  /** The item of a per-item launch; undefined outside one. */
  readonly itemIndex?: number | undefined;
  /** The tool call, for a tool step. */
  readonly toolCall?:
    | {
        readonly callId: string;
        readonly tool: string;
        /** Its position among the calls of its model turn (0 for the first): the order they were asked in. */
        readonly index?: number | undefined;
      }
    | undefined;
  /** The model turn of the agent's loop (1 for the first). */
  readonly toolLoopIteration: number;
  /** Invalid answers the model gave so far in this visit. */
  readonly validationAttempts: number;
}
