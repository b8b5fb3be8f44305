import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { type BenchSide, runSeries } from "./measure.js";

// `--profile`: after a pair scenario's rounds, each side runs a series of its own under V8's sampling
// profiler, alone (the other side waits), and the samples' self time is summed by where the code comes
// from: an AGBoss package, a dependency, Node's own JavaScript, or the engine's native work. The
// profile itself is written out too, for Chrome DevTools or any `.cpuprofile` viewer. The profiler
// samples the bench's main thread only: work on other threads (the SQLite store's background WAL
// checkpoints, `walCheckpoints: "background"`) is in no row.

/** How often the profiler samples, in microseconds: fine enough for a round trip of a few ms. */
export const PROFILE_INTERVAL_US = 100;

/** Self time, per execution, spent in one part of the code. */
export interface ProfilePart {
  readonly part: string;
  readonly ms: number;
}

/** What one side's profiled series found. */
export interface SideProfile {
  readonly executions: number;
  /** Wall time per execution of the profiled series (the profiler's own cost included). */
  readonly wallMs: number;
  /** Sampled time per execution, idle included: about the wall time. */
  readonly sampledMs: number;
  /** Every part, the largest first. */
  readonly parts: readonly ProfilePart[];
  /** Where the profile was written. */
  readonly file: string;
}

/** A node of a V8 CPU profile, as `Profiler.stop` returns it. */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

/** The engine's pseudo-frames, by the name V8 gives them. */
const ENGINE_FRAMES: Readonly<Record<string, string>> = {
  "(garbage collector)": "garbage collection",
  "(program)": "the engine, outside JavaScript",
  "(idle)": "idle (waiting for I/O or a timer)",
};

/** Node's own JavaScript, as {@link sourceOf} names it. */
const NODE = "Node's own JavaScript";

/** better-sqlite3's native methods: the calls into SQLite itself (statements, prepares, pragmas). */
const SQLITE_CALLS = new Set([
  "Statement",
  "prepare",
  "run",
  "all",
  "get",
  "iterate",
  "exec",
  "pragma",
  "get inTransaction",
]);

/** Where the code at `url` comes from: an AGBoss package, a dependency, Node, the bench. */
function sourceOf(url: string): string {
  if (url.startsWith("node:")) return NODE;
  const normalized = url.replaceAll("\\", "/");
  const dependency = normalized.lastIndexOf("/node_modules/");
  if (dependency !== -1) {
    const [scope, name] = normalized.slice(dependency + "/node_modules/".length).split("/");
    return scope?.startsWith("@") === true ? `${scope}/${name}` : (scope ?? url);
  }
  const agboss = /\/packages\/([^/]+)\//.exec(normalized);
  if (agboss !== null) return `@agboss/${agboss[1]}`;
  if (normalized.includes("/bench/src/")) return "the bench";
  return "other JavaScript";
}

/**
 * The part a profile node's self time belongs to. A native function (no script) is named with the
 * first code outside Node that led to it, as `native: randomFillSync (from langsmith, through Node)`,
 * so native work stands apart from the JavaScript around it; better-sqlite3's calls into SQLite, from
 * whichever package, are one part.
 */
function partOf(node: ProfileNode, parentOf: ReadonlyMap<number, ProfileNode>): string | undefined {
  const { functionName, url } = node.callFrame;
  if (url !== "") return sourceOf(url);
  if (functionName === "(root)") return undefined;
  const engine = ENGINE_FRAMES[functionName];
  if (engine !== undefined) return engine;
  let caller = parentOf.get(node.id);
  while (caller !== undefined && caller.callFrame.url === "") caller = parentOf.get(caller.id);
  const direct = caller === undefined ? undefined : sourceOf(caller.callFrame.url);
  // Both sides reach SQLite through better-sqlite3, from their own packages: one row for all of it.
  if (direct !== undefined && /sqlite/i.test(direct) && SQLITE_CALLS.has(functionName)) {
    return "native: SQLite, through better-sqlite3";
  }
  // Past Node's own frames (crypto, streams, timers) to the code that asked for the work.
  while (caller !== undefined && (caller.callFrame.url === "" || sourceOf(caller.callFrame.url) === NODE)) {
    caller = parentOf.get(caller.id);
  }
  const from = caller === undefined ? undefined : sourceOf(caller.callFrame.url);
  const name = functionName || "(anonymous)";
  if (from === undefined) return `native: ${name}${direct === NODE ? " (through Node)" : ""}`;
  return `native: ${name} (from ${from}${direct === NODE ? ", through Node" : ""})`;
}

/** Sums a profile's self time by part, per execution. */
export function partsOf(profile: CpuProfile, executions: number): ProfilePart[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parentOf.set(child, node);
  }
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const selfUs = new Map<number, number>();
  // A sample's delta is the time since the one before it: the time up to the next sample is this one's.
  for (let i = 0; i < samples.length; i += 1) {
    const id = samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i + 1] ?? 0));
  }
  const byPart = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    const part = node === undefined ? undefined : partOf(node, parentOf);
    if (part !== undefined) byPart.set(part, (byPart.get(part) ?? 0) + us);
  }
  return [...byPart].map(([part, us]) => ({ part, ms: us / 1000 / executions })).sort((a, b) => b.ms - a.ms);
}

/**
 * Runs `count` executions of `side` from `first` on under the sampling profiler, writes the profile to
 * `file` and sums it by part. Only for a side in this process (the profiler sees this process alone).
 */
export async function profileSide(
  side: BenchSide,
  first: number,
  count: number,
  file: string,
): Promise<SideProfile> {
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: PROFILE_INTERVAL_US });
    await session.post("Profiler.start");
    // A series that fails leaves the profiler running: disconnecting the session below stops it.
    const series = await runSeries(side, first, count);
    const { profile } = (await session.post("Profiler.stop")) as { profile: CpuProfile };
    writeFileSync(file, JSON.stringify(profile));
    const parts = partsOf(profile, count);
    return {
      executions: count,
      wallMs: series.totalMs / count,
      sampledMs: parts.reduce((sum, part) => sum + part.ms, 0),
      parts,
      file,
    };
  } finally {
    session.disconnect();
  }
}
