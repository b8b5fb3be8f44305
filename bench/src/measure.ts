import { performance } from "node:perf_hooks";

/** One way of doing a scenario's work: AGBoss, or raw LangGraph. */
export interface BenchSide {
  /** Shown in progress lines, e.g. `agboss`. */
  readonly label: string;
  /** Does one execution, on its own thread, and throws when its result is not the expected one. */
  runOnce(iteration: number): Promise<void>;
  /**
   * Runs and times `count` executions from `first` on, where they run (a side in a process of its own
   * times them there, so the messages to it are not in its figures); without it, {@link runSeries}.
   */
  runSeries?(first: number, count: number): Promise<Series>;
  /** Releases what the side opened (database handles, apps). */
  close(): Promise<void>;
}

/** What one side measured in one round (its own executions only). */
export interface RoundSample {
  readonly round: number;
  readonly executions: number;
  /** The sum of its executions' wall times. */
  readonly totalMs: number;
  /** Wall time of each execution, in the order they ran. */
  readonly latenciesMs: readonly number[];
}

/** What a side measured over every round. */
export interface SideSummary {
  readonly label: string;
  /** Executions per second: the median over rounds. */
  readonly execPerSec: number;
  /** Executions per second of each round, in round order. */
  readonly execPerSecByRound: readonly number[];
  /** Latency percentiles over every measured execution of every round. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  readonly executions: number;
}

/** How a scenario is measured. */
export interface MeasureOptions {
  /** Executions per side before measuring (JIT, caches, SQLite pages). */
  readonly warmup: number;
  /** Measured executions per side per round. */
  readonly iterations: number;
  /** Rounds; the sides alternate which goes first each round. */
  readonly rounds: number;
  /** Executions a side runs before the other side takes its turn, within a round. */
  readonly chunk: number;
  /** Receives one line at a time. */
  readonly progress: (line: string) => void;
  /** Called once both sides are warm, before the first measured execution. */
  readonly afterWarmup?: () => void;
}

/** The value at percentile `p` (0–100) of ascending `sorted`, by the nearest-rank method. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** What a series of executions took: their sum and each one's wall time, in the order they ran. */
export interface Series {
  readonly totalMs: number;
  readonly latenciesMs: number[];
}

/**
 * Runs `side` `count` times in a row, one execution at a time, timing each one. `first` numbers the
 * executions so every one gets its own thread across warm-up and rounds.
 */
export async function runSeries(side: BenchSide, first: number, count: number): Promise<Series> {
  const latenciesMs: number[] = new Array(count);
  let totalMs = 0;
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    await side.runOnce(first + i);
    const elapsed = performance.now() - t0;
    latenciesMs[i] = elapsed;
    totalMs += elapsed;
  }
  return { totalMs, latenciesMs };
}

/** `count` executions of `side` from `first` on, run and timed where the side runs them. */
function seriesOf(side: BenchSide, first: number, count: number): Promise<Series> {
  return side.runSeries?.(first, count) ?? runSeries(side, first, count);
}

/** Summarises a side's rounds. */
export function summarize(label: string, samples: readonly RoundSample[]): SideSummary {
  const all = samples.flatMap((s) => s.latenciesMs).sort((a, b) => a - b);
  const byRound = samples.map((s) => (s.executions * 1000) / s.totalMs);
  return {
    label,
    execPerSec: median(byRound),
    execPerSecByRound: byRound,
    p50Ms: percentile(all, 50),
    p99Ms: percentile(all, 99),
    meanMs: all.reduce((sum, v) => sum + v, 0) / Math.max(1, all.length),
    executions: all.length,
  };
}

/** What {@link measurePair} found. */
export interface PairResult {
  readonly first: SideSummary;
  readonly second: SideSummary;
  /** first ÷ second executions per second, per round (each round's pair ran under the same load). */
  readonly ratioByRound: readonly number[];
  /** The median of {@link ratioByRound}. */
  readonly ratio: number;
  /** Per side, the first iteration number the warm-up and the rounds left unused (for more executions on new threads). */
  readonly nextIteration: readonly [number, number];
}

/**
 * Warms both sides up, then measures them in `rounds` rounds of `iterations` executions each. Within a
 * round the sides take turns in chunks of `chunk` executions (A B A B …, B A B A … the next round), so
 * both see the same machine load, the same garbage-collector state and the same process warmth; a
 * side's time is the sum of its own chunks. The ratio is taken per round, then its median.
 */
export async function measurePair(
  sides: readonly [BenchSide, BenchSide],
  options: MeasureOptions,
): Promise<PairResult> {
  const { progress } = options;
  const next = [0, 0];
  const samples: RoundSample[][] = [[], []];
  for (const [index, side] of sides.entries()) {
    progress(`  warm-up  ${side.label} ${options.warmup} executions`);
    await seriesOf(side, next[index] as number, options.warmup);
    next[index] = (next[index] as number) + options.warmup;
  }
  options.afterWarmup?.();
  const chunk = Math.max(1, Math.min(options.chunk, options.iterations));
  const ratioByRound: number[] = [];
  for (let round = 1; round <= options.rounds; round += 1) {
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    const rounds = [
      { totalMs: 0, latenciesMs: [] as number[] },
      { totalMs: 0, latenciesMs: [] as number[] },
    ];
    let reported = 0;
    for (let done = 0; done < options.iterations; done += chunk) {
      const count = Math.min(chunk, options.iterations - done);
      for (const index of order) {
        const series = await seriesOf(sides[index] as BenchSide, next[index] as number, count);
        next[index] = (next[index] as number) + count;
        const into = rounds[index] as (typeof rounds)[number];
        into.totalMs += series.totalMs;
        into.latenciesMs.push(...series.latenciesMs);
      }
      if ((done + count) * 4 >= (reported + 1) * options.iterations && done + count < options.iterations) {
        reported = Math.floor(((done + count) * 4) / options.iterations);
        progress(
          `  round ${round}/${options.rounds} ${done + count}/${options.iterations} executions per side`,
        );
      }
    }
    const rates = rounds.map((r) => (options.iterations * 1000) / r.totalMs);
    for (const [index, r] of rounds.entries()) {
      samples[index]?.push({ round, executions: options.iterations, ...r });
    }
    ratioByRound.push((rates[0] as number) / (rates[1] as number));
    progress(
      `  round ${round}/${options.rounds} done: ${sides[0].label} ${(rates[0] as number).toFixed(1)} exec/s, ` +
        `${sides[1].label} ${(rates[1] as number).toFixed(1)} exec/s, ratio ${(ratioByRound.at(-1) as number).toFixed(2)}`,
    );
  }
  return {
    first: summarize(sides[0].label, samples[0] ?? []),
    second: summarize(sides[1].label, samples[1] ?? []),
    ratioByRound,
    ratio: median(ratioByRound),
    nextIteration: [next[0] as number, next[1] as number],
  };
}

/** p50/p99 of one part of an execution on one side. */
export interface PhaseSummary {
  readonly side: string;
  readonly phase: string;
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
}

/**
 * Wall times of the parts of an execution (a round trip's `pause` and `resume`), per side. A side's
 * `runOnce` adds to it; the runner resets it after warm-up.
 */
export class PhaseTimings {
  readonly #samples = new Map<string, number[]>();

  /** Adds one sample of `phase` on `side`. */
  add(side: string, phase: string, ms: number): void {
    const key = `${side}\u0000${phase}`;
    const samples = this.#samples.get(key);
    if (samples === undefined) this.#samples.set(key, [ms]);
    else samples.push(ms);
  }

  /** Forgets every sample (after warm-up). */
  reset(): void {
    this.#samples.clear();
  }

  /** Every sample as `[side, phase, ms]`, forgetting them (a side's process sends them to the runner). */
  drain(): [string, string, number][] {
    const drained: [string, string, number][] = [];
    for (const [key, samples] of this.#samples) {
      const [side, phase] = key.split("\u0000") as [string, string];
      for (const ms of samples) drained.push([side, phase, ms]);
    }
    this.#samples.clear();
    return drained;
  }

  /** Each side's phases, in the order they were first added. */
  summaries(): PhaseSummary[] {
    return [...this.#samples].map(([key, samples]) => {
      const [side, phase] = key.split("\u0000") as [string, string];
      return summarizeLatencies(side, phase, samples);
    });
  }
}

/** Percentiles and mean of `samples` (milliseconds). */
export function summarizeLatencies(side: string, phase: string, samples: readonly number[]): PhaseSummary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    side,
    phase,
    count: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    meanMs: sorted.reduce((sum, v) => sum + v, 0) / Math.max(1, sorted.length),
  };
}
