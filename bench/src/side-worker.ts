import { PhaseTimings, runSeries } from "./measure.js";
import { oneToolAgentScenario } from "./scenarios/one-tool-agent.js";
import { pauseResumeScenario } from "./scenarios/pause-resume.js";
import type { PairScenario } from "./scenarios/scenario.js";
import type { FromSideWorker, SideWorkerConfig, ToSideWorker } from "./side-process.js";

// One side of a pair scenario in a process of its own (`--isolate`, see side-process.ts): it opens that
// side alone, says it is ready, then runs and times each series the runner asks for, until `close`.
//
//   node --conditions=@agboss/source --import tsx src/side-worker.ts '<SideWorkerConfig as JSON>'

const PAIR_SCENARIOS: readonly PairScenario[] = [oneToolAgentScenario, pauseResumeScenario];

const config = JSON.parse(process.argv[2] ?? "") as SideWorkerConfig;

function send(message: FromSideWorker): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

async function main(): Promise<void> {
  const scenario = PAIR_SCENARIOS.find((s) => s.id === config.scenario);
  if (scenario === undefined) throw new Error(`no pair scenario "${config.scenario}"`);
  const phases = new PhaseTimings();
  const opened = await scenario.openSide(
    { ...config.context, progress: (line) => process.stderr.write(`${line}\n`) },
    config.side,
    phases,
  );
  // The runner gone (its run ended, or it died): nothing more will be asked.
  process.once("disconnect", () => process.exit());
  // One request at a time: the runner waits for each reply before it asks again.
  let queue = Promise.resolve();
  process.on("message", (message: ToSideWorker) => {
    queue = queue.then(async () => {
      try {
        if (message.type === "run") {
          const series = await runSeries(opened.side, message.first, message.count);
          await send({ type: "ran", series, phases: phases.drain() });
        } else if (message.type === "describe") {
          await send({ type: "described", description: await opened.describe() });
        } else {
          await opened.side.close();
          await send({ type: "closed" });
          process.disconnect();
        }
      } catch (error) {
        await send({
          type: "failed",
          message: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      }
    });
  });
  await send({ type: "ready" });
}

main().catch(async (error: unknown) => {
  await send({
    type: "failed",
    message: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  process.exitCode = 1;
  if (process.connected) process.disconnect();
});
