/** A conversation: the executions of one `threadId` in one tenant. */
export interface ThreadRecord {
  readonly tenantId: string;
  readonly threadId: string;
  /** Who started it; a ThreadOwner pause is answered by this id and resumed passes run as it. */
  readonly ownerId: string;
  /** The workflow whose executions the thread holds. */
  readonly workflowName: string;
  /** The newest execution on the thread. */
  readonly latestExecutionId: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}
