import { PhaseTimings, runSeries } from "./measure.js";
import { oneToolAgentScenario } from "./scenarios/one-tool-agent.js";
import { pauseResumeScenario } from "./scenarios/pause-resume.js";
import type { OpenedSide, PairScenario } from "./scenarios/scenario.js";
import type { FromSideWorker, ToSideWorker } from "./side-process.js";

// One side of a pair scenario in a process of its own (`--isolate`, see side-process.ts): told by its
// first message which scenario and side to open, it opens that side alone, says it is ready, then runs
// and times each series the runner asks for, until `close`.
//
//   node --conditions=@agboss/source --import tsx src/side-worker.ts   (started by the runner, with IPC)

const PAIR_SCENARIOS: readonly PairScenario[] = [oneToolAgentScenario, pauseResumeScenario];

function send(message: FromSideWorker): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

const describeError = (error: unknown) =>
  error instanceof Error ? (error.stack ?? error.message) : String(error);

const phases = new PhaseTimings();
let opened: OpenedSide | undefined;

async function handle(message: ToSideWorker): Promise<void> {
  switch (message.type) {
    case "open": {
      const { config } = message;
      const scenario = PAIR_SCENARIOS.find((s) => s.id === config.scenario);
      if (scenario === undefined) throw new Error(`no pair scenario "${config.scenario}"`);
      opened = await scenario.openSide(
        { ...config.context, progress: (line) => process.stderr.write(`${line}\n`) },
        config.side,
        phases,
      );
      return send({ type: "ready" });
    }
    case "run": {
      if (opened === undefined) throw new Error("asked to run before it was opened");
      const series = await runSeries(opened.side, message.first, message.count);
      return send({ type: "ran", series, phases: phases.drain() });
    }
    case "describe": {
      if (opened === undefined) throw new Error("asked what it runs on before it was opened");
      return send({ type: "described", description: await opened.describe() });
    }
    case "close": {
      try {
        await opened?.side.close();
        await send({ type: "closed" });
      } finally {
        if (process.connected) process.disconnect();
      }
    }
  }
}

// The runner gone (its run ended, or it died, even while this side was opening): nothing more will be
// asked, and nothing here would end the process (a pool or a timer may hold it open).
process.once("disconnect", () => process.exit());
// One request at a time: the runner waits for each reply before it asks again.
let queue = Promise.resolve();
process.on("message", (message: ToSideWorker) => {
  queue = queue.then(() =>
    handle(message).catch(async (error: unknown) => {
      phases.drain(); // a failed series' parts go with it
      await send({ type: "failed", message: describeError(error) });
    }),
  );
});
