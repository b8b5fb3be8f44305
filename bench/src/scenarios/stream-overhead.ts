import { createApp, ExecutionStatus } from "@agboss/core";
import { pairBackend } from "../backends.js";
import { type BenchSide, measurePair } from "../measure.js";
import { ANSWER, BenchApplication, OrderStatusStart, toolRuns, USER_TEXT } from "./one-tool-agent.js";
import type { ScenarioContext, SoloResult, SoloScenario } from "./scenario.js";

// What following a run costs: the one-tool agent of `one-tool-agent`, run by `app.stream` (every event
// read as it comes) and by `app.execute`, on one app and one store, in turns like a pair scenario.

/** The target: streaming a run costs at most this much more than executing it. */
const MAX_OVERHEAD = 0.05;

export const streamOverheadScenario: SoloScenario = {
  kind: "solo",
  id: "stream-overhead",
  title: "streaming overhead",
  description:
    "the one-tool agent run by app.stream, reading every event, against app.execute of the same run on the same app and store",
  backends: ["sqlite", "postgres", "memory"],
  async run(context: ScenarioContext): Promise<SoloResult> {
    const backend = pairBackend(context, "bench-stream-application");
    const app = await createApp(BenchApplication, { store: backend.agbossStore });
    let events = 0;
    const check = (
      iteration: number,
      how: string,
      result: { status: string; output: unknown },
      before: number,
    ) => {
      const text = (result.output as { text?: unknown } | undefined)?.text;
      if (result.status !== ExecutionStatus.Completed || text !== ANSWER || toolRuns.agboss !== before + 1) {
        throw new Error(`${how} ${iteration} ended ${result.status} with ${JSON.stringify(result.output)}`);
      }
    };
    const streamed: BenchSide = {
      label: "stream",
      async runOnce(iteration) {
        const before = toolRuns.agboss;
        const run = app.stream(
          OrderStatusStart,
          { text: USER_TEXT },
          { threadId: `stream-${iteration}`, ownerId: "bench-user" },
        );
        let seen = 0;
        for await (const _event of run) seen += 1;
        if (seen === 0) throw new Error(`stream ${iteration} gave no events`);
        events += seen;
        check(iteration, "stream", await run.result, before);
      },
      close: async () => {},
    };
    const executed: BenchSide = {
      label: "execute",
      async runOnce(iteration) {
        const before = toolRuns.agboss;
        const result = await app.execute(
          OrderStatusStart,
          { text: USER_TEXT },
          { threadId: `execute-${iteration}`, ownerId: "bench-user" },
        );
        check(iteration, "execute", result, before);
      },
      close: async () => {},
    };
    try {
      const pair = await measurePair([streamed, executed], {
        ...context.measure,
        progress: context.progress,
      });
      const overhead = 1 / pair.ratio - 1;
      const byRound = pair.ratioByRound.map((r) => `${((1 / r - 1) * 100).toFixed(1)}%`).join(", ");
      const perRun = events / (pair.first.executions + context.measure.warmup);
      return {
        lines: [
          "| streaming overhead | stream exec/s | execute exec/s | overhead (by round) | stream p50 | execute p50 | events per run |",
          "|:--|--:|--:|:--|--:|--:|--:|",
          `| one-tool agent, ${backend.agbossDescription.split(" ")[0]} | ${pair.first.execPerSec.toFixed(1)} | ${pair.second.execPerSec.toFixed(1)} | ${(overhead * 100).toFixed(1)}% (${byRound}) | ${pair.first.p50Ms.toFixed(2)} ms | ${pair.second.p50Ms.toFixed(2)} ms | ${perRun.toFixed(1)} |`,
          `  overhead = execute exec/s ÷ stream exec/s − 1 (median over rounds); the target is at most ${MAX_OVERHEAD * 100}%: ${overhead <= MAX_OVERHEAD ? "met" : "not met"}`,
        ],
        figures: {
          streamExecPerSec: pair.first.execPerSec,
          executeExecPerSec: pair.second.execPerSec,
          overhead,
          overheadByRound: pair.ratioByRound.map((r) => 1 / r - 1),
          eventsPerRun: perRun,
        },
      };
    } finally {
      await app.close();
    }
  },
};
