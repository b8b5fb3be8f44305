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
    return inAskingOrder(answers.map((a) => a.answer as PauseEntry));
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
    // A tree with no checkpoint yet reads as empty values: no run of its own.
    const ownRun = state?.run?.executionId === frame.executionId ? state.run : undefined;
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

  /** Stores the record (fenced); with `release`, the fence's lease is released in the same write. */
  async save(
    record: ExecutionRecord,
    fence?: Fence,
    options?: { readonly release?: boolean },
  ): Promise<void> {
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
      options,
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

/**
 * The audit trail in the order the pauses were asked. Pauses asked at the same instant (the calls of
 * one model turn run side by side) are ordered by where they were asked, then by their call's place
 * in its turn; the store's order (which ties on the provider's random call ids) only breaks what is left.
 */
function inAskingOrder(entries: readonly PauseEntry[]): PauseEntry[] {
  const keyOf = (entry: PauseEntry) => {
    const step = entry.step;
    return [
      entry.askedAt,
      entry.executionId,
      step.nodeId,
      step.copy ?? -1,
      step.itemIndex ?? -1,
      step.visit,
      step.toolLoopIteration,
      step.toolCall?.index ?? -1,
    ] as const;
  };
  return entries
    .map((entry, position) => ({ entry, position, key: keyOf(entry) }))
    .sort((a, b) => {
      for (let i = 0; i < a.key.length; i += 1) {
        const x = a.key[i] as string | number;
        const y = b.key[i] as string | number;
        if (x !== y) return x < y ? -1 : 1;
      }
      return a.position - b.position;
    })
    .map((item) => item.entry);
}
