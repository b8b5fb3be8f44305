import type { ExecutionOutput, ExecutionStream, ExecutionStreamEvent } from "@agboss/core";
import type { TerminalOutput } from "./terminal-output.js";

/** Options of {@link showProgress}. */
export interface ShowProgressOptions {
  /** Where the lines go. Default `process.stdout`. */
  readonly output?: TerminalOutput;
  /** Write a model's text as it arrives (from models that stream it). Default `true`. */
  readonly text?: boolean;
}

/**
 * Writes a streamed run's progress to the terminal while it works (which step, which tool, which pause),
 * one line each, and resolves with the run's result (`app.stream` / `app.streamResume`), or rejects with
 * its error after saying so.
 *
 * @example
 * const result = await showProgress(app.stream(RefundWorkflowStart, { text: "Refund ord_1" }, { ownerId: "dana" }));
 */
export async function showProgress<TOutput>(
  run: ExecutionStream<TOutput>,
  options: ShowProgressOptions = {},
): Promise<ExecutionOutput<TOutput>> {
  const output = options.output ?? process.stdout;
  const showText = options.text !== false;
  let midLine = false;
  let textStreamed = false;
  // A call refused before the run began (an answer its DTO refuses, say) is its caller's to explain.
  let begun = false;
  const line = (text: string) => {
    output.write(`${midLine ? "\n" : ""}${text}\n`);
    midLine = false;
  };
  try {
    for await (const event of run) {
      if (event.type === "model.text") {
        if (!showText) continue;
        output.write(event.text);
        midLine = !event.text.endsWith("\n");
        textStreamed = true;
        continue;
      }
      if (event.type === "execution.started" || event.type === "execution.resumed") begun = true;
      if (event.type === "execution.failed" && !begun) continue;
      const said = describe(event as ExecutionStreamEvent<unknown>, showText && !textStreamed);
      if (event.type === "model.turn") textStreamed = false;
      if (said !== undefined) line(said);
    }
  } catch {
    // The failure was written with its execution.failed event; the result rejects with the error.
  }
  if (midLine) output.write("\n");
  return run.result;
}

/** One event as a line; undefined for an event not worth a line. */
function describe(event: ExecutionStreamEvent<unknown>, showTurnText: boolean): string | undefined {
  switch (event.type) {
    case "execution.started":
      return `▶ ${event.workflow}`;
    case "execution.resumed":
      return `▶ ${event.workflow} goes on (answered by ${event.answeredBy})`;
    case "model.turn": {
      const who = event.caller.replace(/^agent:/, "");
      if (event.toolCalls.length > 0)
        return `  ${who} calls ${event.toolCalls.map((c) => c.name).join(", ")}`;
      return showTurnText && event.text !== "" ? `  ${who}: ${event.text}` : undefined;
    }
    case "tool.started":
      return `  ⚙ ${event.tool} …`;
    case "tool.returned":
      return `  ✔ ${event.tool} returned`;
    case "tool.failed":
      return `  ✖ ${event.tool} failed: ${event.error.message}`;
    case "pause.asked":
      return `  ⏸ ${event.tool} waits for ${event.role}`;
    case "pause.answered":
      return `  ${event.outcome === "rejected" ? "✖" : "✔"} ${event.tool} ${event.outcome}`;
    case "pause.withdrawn":
      return `  ✖ ${event.tool}: its question was withdrawn`;
    case "execution.finished":
      return "■ finished";
    case "execution.paused": {
      const n = event.output.pending.length;
      return `⏸ waiting on ${n} question${n === 1 ? "" : "s"}`;
    }
    case "execution.failed":
      return `✖ failed: ${event.error.message}`;
    default:
      return undefined;
  }
}
