import { maskWith } from "../dto/sensitive.js";
import type { FlowStateValue } from "../graph/flow-state.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import { ExecutionStatus } from "../records/execution-status.js";
import type { PauseEntry } from "../records/pause-entry.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import type { Fence } from "../store/fence.js";
import type { Lease } from "../store/lease-repository.js";
import { childRecords } from "./child-records.js";
import type { Tree } from "./tree.js";

/**
 * Builds and stores an execution's record: what it ran (its steps, usage, children), how it stands,
 * and its pauses' audit trail. Writes made while a pass moves a tree carry its lease.
 * @internal
 */
export class ExecutionRecorder {
  readonly #services: RuntimeServices;

  constructor(services: RuntimeServices) {
    this.#services = services;
  }

  async audit(tenantId: string, rootExecutionId: string): Promise<PauseEntry[]> {
    const answers = await this.#services.store.executions.findPauseAnswersByTenantIdAndRootExecutionId(
      tenantId,
      rootExecutionId,
    );
    return answers.map((a) => a.answer as PauseEntry);
  }

  build(
    tree: Tree,
    args: {
      readonly status: ExecutionStatus;
      /** The tree's state, when it has one (its steps, output and children are read from it). */
      readonly state?: FlowStateValue | undefined;
      /** What failed it, for a failed execution. */
      readonly error?: unknown;
      /** The audit trail to show with it. */
      readonly pauses: readonly PauseEntry[];
    },
  ): ExecutionRecord {
    const { status, state, error, pauses } = args;
    const { frame, flow } = tree;
    const ownRun = state?.run.executionId === frame.executionId ? state.run : undefined;
    const steps = ownRun?.steps ?? [];
    const usage = { modelCalls: 0, inputTokens: 0, outputTokens: 0 };
    for (const step of steps) {
      if (step.type !== "model") continue;
      usage.modelCalls += 1;
      usage.inputTokens += step.usage?.inputTokens ?? 0;
      usage.outputTokens += step.usage?.outputTokens ?? 0;
    }
    const done = status !== ExecutionStatus.Running && status !== ExecutionStatus.Paused;
    return {
      tenantId: frame.tenant.tenantId,
      tenant: frame.tenant,
      executionId: frame.executionId,
      rootExecutionId: frame.rootExecutionId,
      threadId: frame.threadId,
      ownerId: frame.ownerId,
      workflow: frame.workflow,
      start: flow.start.name,
      status,
      startedAt: new Date(tree.startedAt).toISOString(),
      finishedAt: done ? new Date(this.#services.clock.now()).toISOString() : undefined,
      input: maskWith(flow.start.input.schema, tree.input),
      output: ownRun?.output === undefined ? undefined : maskWith(flow.finish.output.schema, ownRun.output),
      error:
        error === undefined
          ? undefined
          : {
              code: (error as { code?: string }).code,
              name: error instanceof Error ? error.name : "Error",
              message: error instanceof Error ? error.message : String(error),
            },
      steps,
      usage,
      ...(tree.budget === undefined ? {} : { budget: tree.budget }),
      pauses,
      children: childRecords(Object.values(ownRun?.children ?? {}), pauses),
    };
  }

  async save(record: ExecutionRecord, fence?: Fence): Promise<void> {
    await this.#services.store.executions.save(
      {
        tenantId: record.tenantId,
        executionId: record.executionId,
        rootExecutionId: record.rootExecutionId,
        parentExecutionId: undefined,
        threadId: record.threadId,
        workflowName: record.workflow.name,
        status: record.status,
        startedAt: Date.parse(record.startedAt),
        updatedAt: this.#services.clock.now(),
        record,
      },
      fence,
    );
  }

  /** Records the root execution as running, under the tree's lease (fenced). */
  async markRunning(tree: Tree, lease: Lease): Promise<void> {
    const stored = tree.stored;
    if (stored === undefined || stored.status !== ExecutionStatus.Paused) return;
    const record = stored.record as ExecutionRecord;
    await this.#services.store.executions.save(
      {
        ...stored,
        status: ExecutionStatus.Running,
        updatedAt: this.#services.clock.now(),
        record: { ...record, status: ExecutionStatus.Running, finishedAt: undefined },
      },
      lease,
    );
  }
}
