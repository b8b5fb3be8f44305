import {
  Agent,
  Application,
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  callTool,
  createApp,
  ExecutionStatus,
  Injectable,
  ModelProvider,
  type ModelProviderHandler,
  PauseAnswerer,
  replyWith,
  type Store,
  start,
  Tool,
  type ToolHandler,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { type CompiledQuery, type Kysely, sql } from "kysely";
import { expect } from "vitest";

// A real application's pause, resume and recovery sweep in a store that already holds many copies of a
// real paused tree (every row of it: thread, execution, pause, lease, checkpoints, blobs and writes),
// recording each statement the store runs on each path. The store tests of each dialect EXPLAIN them.

/** The tenant of every tree, seeded or measured: an index that narrows only by tenant reads them all. */
export const PLAN_TENANT = "acme";

@Injectable()
class PlanInbox {
  last: string | undefined;
}

@ChannelRole({
  name: "plan-approval-channel",
  description: "A manager approves",
  approves: WorkflowStartTextDto,
  answeredBy: PauseAnswerer.Channel,
})
abstract class PlanApprovalChannel extends ChannelOf<PlanApprovalChannel> {}

@Channel({ name: "plan-inbox-channel", description: "Keeps the pauseId", deps: [PlanInbox] })
class PlanInboxChannel extends PlanApprovalChannel {
  constructor(private readonly inbox: PlanInbox) {
    super();
  }

  send(ask: ChannelAsk<PlanApprovalChannel>): Promise<ChannelOutcome<PlanApprovalChannel>> {
    this.inbox.last = ask.pauseId;
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

@Tool({
  name: "plan-refund-tool",
  description: "Refunds once approved",
  input: WorkflowStartTextDto,
  output: WorkflowFinishTextDto,
  channel: PlanApprovalChannel,
})
class PlanRefundTool implements ToolHandler<WorkflowStartTextDto, WorkflowFinishTextDto> {
  run(input: WorkflowStartTextDto): WorkflowFinishTextDto {
    return { text: `refunded ${input.text}` } as WorkflowFinishTextDto;
  }
}

@Agent({
  name: "plan-agent",
  description: "Refunds orders",
  prompt: "Refund the order once approved.",
  model: "plan/scripted",
  tools: [PlanRefundTool],
})
class PlanAgent {}

@WorkflowStart({ name: "plan-workflow-start", description: "A request", input: WorkflowStartTextDto })
class PlanStart {}

@WorkflowFinish({ name: "plan-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
class PlanFinish {}

@Workflow({
  name: "plan-workflow",
  version: "1.0.0",
  flow: [start(PlanStart).returns(WorkflowStartTextDto).toAgent(PlanAgent).toFinish(PlanFinish)],
})
class PlanWorkflow {}

class PlanModel implements ChatModel {
  invoke(request: ChatRequest): Promise<ChatResponse> {
    return Promise.resolve(
      request.messages.at(-1)?.role === "tool"
        ? replyWith("Refunded.")
        : callTool(PlanRefundTool, { text: "o-1001" }),
    );
  }
}

@ModelProvider({ name: "plan-model-provider", serves: ["*"] })
class PlanModelProvider implements ModelProviderHandler {
  chatModel(): ChatModel {
    return new PlanModel();
  }
}

@Application({
  name: "plan-application",
  workflows: [PlanWorkflow],
  providers: [PlanInbox, PlanModelProvider, PlanInboxChannel],
})
class PlanApplication {}

/** The statements of each path, in the order the store ran them (transaction control left out). */
export interface PlanPaths {
  readonly pause: readonly CompiledQuery[];
  readonly resume: readonly CompiledQuery[];
  readonly sweep: readonly CompiledQuery[];
  /** A follower's read of the paused tree (`app.follow`): the thread, the execution, the tree's pauses. */
  readonly follow: readonly CompiledQuery[];
}

/** The tables a seeded tree has rows in, each with how many rows the seed left in it. */
export type SeededRows = Readonly<Record<string, number>>;

export interface PlanWorkloadOptions {
  readonly store: Store;
  /** The store's database, unscoped: the seed runs its own SQL on it. */
  readonly db: Kysely<unknown>;
  /** Where the store's kysely log leaves every statement it runs. */
  readonly queries: CompiledQuery[];
  /** How many copies of the paused tree wait while the paths run. */
  readonly trees: number;
  /** The schema of the store's tables (Postgres). */
  readonly schema?: string | undefined;
  /** Runs after the seed and before the paths (Postgres: ANALYZE). */
  readonly afterSeed?: () => Promise<void>;
}

const CONTROL = /^\s*(begin|commit|rollback|savepoint|release|pragma|set\b|select 1\b)/i;

/**
 * Seeds `trees` copies of a real paused tree, then runs a pause, its resume and a sweep (plus the
 * sweep's next pages, with their cursors) and returns the statements of each.
 */
export async function runPlanWorkload(options: PlanWorkloadOptions): Promise<{
  paths: PlanPaths;
  seeded: SeededRows;
}> {
  const { store, queries } = options;
  const app = await createApp(PlanApplication, { store });
  try {
    const template = await app.execute(
      PlanStart,
      { text: "Please refund o-1001." },
      { threadId: "tree-0000", ownerId: "customer-1", tenant: { tenantId: PLAN_TENANT } },
    );
    if (template.status !== ExecutionStatus.Paused) throw new Error(`the template tree ${template.status}`);
    const seeded = await cloneTrees(options, template.executionId);
    await options.afterSeed?.();

    queries.length = 0;
    // With its record, so the pause reads the tree's audit trail too (as `app.record` does), and that
    // read's plan is checked with the rest.
    const paused = await app.execute(
      PlanStart,
      { text: "Please refund o-2002." },
      { threadId: "measured-thread", ownerId: "customer-2", tenant: { tenantId: PLAN_TENANT }, record: true },
    );
    if (paused.status !== ExecutionStatus.Paused) throw new Error(`the measured tree ${paused.status}`);
    const pause = statements(queries);

    // A follower's first read of the tree, as every later round reads it (its first event is the
    // pending pause; the follow is left there).
    queries.length = 0;
    const following = app
      .follow({ threadId: "measured-thread" }, { tenantId: PLAN_TENANT, pollIntervalMs: 3_600_000 })
      [Symbol.asyncIterator]();
    const first = await following.next();
    if (first.done === true || first.value.type !== "pause.asked")
      throw new Error("the follow read no pause");
    await following.return?.();
    const follow = statements(queries);

    const pauseId = app.get(PlanInbox).last as string;
    queries.length = 0;
    const done = await app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: PLAN_TENANT, answeredBy: "manager-1" },
    );
    if (done.status !== ExecutionStatus.Completed) throw new Error(`the resume ended ${done.status}`);
    const resume = statements(queries);

    queries.length = 0;
    await app.sweepOnce(24 * 3600_000);
    // The sweep's next pages, as it asks for them when a page comes back full.
    const [running] = await store.executions.listByStatus([ExecutionStatus.Running], 1);
    if (running === undefined) throw new Error("the seed left no running execution");
    await store.executions.listByStatus([ExecutionStatus.Running], 100, running);
    const [answered] = await store.pauses.listResolvedBefore({ before: Number.MAX_SAFE_INTEGER, limit: 1 });
    if (answered === undefined) throw new Error("the seed left no answered pause");
    await store.pauses.listResolvedBefore({
      before: Number.MAX_SAFE_INTEGER,
      limit: 100,
      after: {
        resolvedAt: answered.resolvedAt as number,
        tenantId: answered.tenantId,
        pauseId: answered.pauseId,
      },
    });
    await store.pauses.listDueDeadlines({
      now: Date.now(),
      limit: 100,
      after: { deadlineAt: 0, tenantId: PLAN_TENANT, pauseId: answered.pauseId },
    });
    await store.pauses.listOwedWithdrawals({
      now: Date.now(),
      limit: 100,
      after: { owedAt: 0, tenantId: PLAN_TENANT, pauseId: answered.pauseId },
    });
    const sweep = statements(queries);
    return { paths: { pause, resume, sweep, follow }, seeded };
  } finally {
    await app.close();
  }
}

function statements(queries: readonly CompiledQuery[]): CompiledQuery[] {
  return queries.filter((q) => !CONTROL.test(q.sql));
}

/**
 * Copies every row of the paused tree `rootExecutionId` (on thread `tree-0000`) `trees` times, in one
 * `insert … select` per table: each id of the tree in a text column gets the copy's number appended.
 * Binary columns (checkpoints, blobs, writes) are copied as they are, so each copy is as large as the
 * real tree. A tenth of the copies is then recorded as running (updated in the future, so the sweep leaves them), and
 * a tenth of their pauses as answered in the future and a tenth as taken, so the sweep's indexes hold
 * something to page and the planner's statistics see every status.
 */
async function cloneTrees(options: PlanWorkloadOptions, rootExecutionId: string): Promise<SeededRows> {
  const { db, schema, trees } = options;
  const table = (name: string) => (schema === undefined ? sql.table(name) : sql.table(`${schema}.${name}`));
  const tables = (await db.introspection.getTables()).filter(
    (t) =>
      t.name.startsWith("agboss_") &&
      !t.name.startsWith("agboss_migration") &&
      (schema === undefined || t.schema === schema),
  );
  const pauseIds = (
    await sql<{
      pause_id: string;
    }>`select pause_id from ${table("agboss_pauses")} where root_execution_id = ${rootExecutionId}`.execute(
      db,
    )
  ).rows.map((r) => r.pause_id);
  const ids = [rootExecutionId, "tree-0000", ...pauseIds];
  const seeded: Record<string, number> = {};
  for (const t of tables) {
    const text = (type: string) => /^(text|varchar|character varying)$/i.test(type);
    const columns = t.columns.map((c) => {
      let expr = sql.ref(c.name) as ReturnType<typeof sql.ref> | ReturnType<typeof sql>;
      if (text(c.dataType)) {
        for (const id of ids) expr = sql`replace(${expr}, ${sql.lit(id)}, ${sql.lit(id)} || '.' || n.i)`;
      }
      return { name: c.name, expr };
    });
    const matches = sql.join(
      t.columns
        .filter((c) => text(c.dataType))
        .flatMap((c) => ids.map((id) => sql`${sql.ref(c.name)} like ${sql.lit(`%${id}%`)}`)),
      sql` or `,
    );
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${sql.lit(trees)})
      insert into ${table(t.name)} (${sql.join(columns.map((c) => sql.ref(c.name)))})
      select ${sql.join(columns.map((c) => c.expr))} from ${table(t.name)} cross join n where ${matches}`.execute(
      db,
    );
    const [count] = (
      await sql<{ n: number | string }>`select count(*) as n from ${table(t.name)}`.execute(db)
    ).rows;
    seeded[t.name] = Number(count?.n ?? 0);
  }
  // Tables the tree leaves empty until it is answered or spends a budget: as many rows of their own.
  await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${sql.lit(trees)})
    insert into ${table("agboss_pause_answers")} (tenant_id, idempotency_key, root_execution_id, asked_at, answer)
    select ${PLAN_TENANT}, 'answered-step.' || n.i, ${rootExecutionId} || '.' || n.i, n.i, '{}' from n`.execute(
    db,
  );
  await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${sql.lit(trees)})
    insert into ${table("agboss_budget_ledger")}
      (tenant_id, budget, window_start, model_calls, input_tokens, output_tokens, expires_at)
    select ${PLAN_TENANT}, 'budget.' || n.i, 0, 1, 1, 1, ${sql.lit(Date.now() + 3600_000)} + n.i from n`.execute(
    db,
  );
  for (const name of ["agboss_pause_answers", "agboss_budget_ledger"]) {
    const [count] = (await sql<{ n: number | string }>`select count(*) as n from ${table(name)}`.execute(db))
      .rows;
    seeded[name] = Number(count?.n ?? 0);
  }
  const future = Date.now() + 365 * 24 * 3600_000;
  await sql`update ${table("agboss_executions")} set status = ${ExecutionStatus.Running}, updated_at = ${future}
    where execution_id like ${"%0"}`.execute(db);
  await sql`update ${table("agboss_pauses")} set status = 'resolved', resolved_at = ${future}, answer = '{}'
    where pause_id like ${"%1"}`.execute(db);
  // And a tenth taken (answered and resumed a while ago, kept until retention removes them).
  await sql`update ${table("agboss_pauses")} set status = 'taken', resolved_at = ${Date.now() - 3600_000}, answer = '{}'
    where pause_id like ${"%2"}`.execute(db);
  return seeded;
}

/** The tables each path must read or write, so a check cannot pass by never reaching one of them. */
export const PATH_TABLES: Readonly<Record<keyof PlanPaths, readonly string[]>> = {
  pause: [
    "agboss_threads",
    "agboss_executions",
    "agboss_leases",
    "agboss_pauses",
    "agboss_pause_answers",
    "agboss_checkpoints",
    "agboss_checkpoint_blobs",
    "agboss_checkpoint_writes",
  ],
  resume: [
    "agboss_executions",
    "agboss_leases",
    "agboss_pauses",
    "agboss_checkpoints",
    "agboss_checkpoint_blobs",
    "agboss_checkpoint_writes",
  ],
  sweep: ["agboss_executions", "agboss_pauses", "agboss_budget_ledger"],
  follow: ["agboss_threads", "agboss_executions", "agboss_pauses"],
};

/**
 * Checks one path's statements: every table it must touch was seeded with a backlog and is reached, and
 * no statement has a problem in its plan (`problems` reads the dialect's EXPLAIN).
 */
export function checkPath(args: {
  readonly statements: readonly CompiledQuery[];
  readonly touches: readonly string[];
  readonly seeded: SeededRows;
  readonly trees: number;
  readonly problems: (query: CompiledQuery) => readonly string[];
}): void {
  const { statements, touches, seeded, trees, problems } = args;
  for (const table of touches) {
    expect(seeded[table], table).toBeGreaterThanOrEqual(trees);
    expect(statements.some((q) => q.sql.includes(`"${table}"`), table)).toBe(true);
  }
  const wrong = new Map<string, readonly string[]>();
  for (const query of statements) {
    const found = problems(query);
    if (found.length > 0) wrong.set(query.sql, found);
  }
  expect(Object.fromEntries(wrong)).toEqual({});
}
