import { mkdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pairBackend } from "./backends.js";
import { PhaseTimings } from "./measure.js";
import type { PairScenario, ScenarioContext, SideName } from "./scenarios/scenario.js";

// What each side of a pair writes to its SQLite file, counted in pages: every commit appends the
// pages it changed to the write-ahead log, one frame each, so the log of a few executions, read back,
// tells how many pages an execution writes, how many commits carry them and which tables and indexes
// they belong to. Unlike a timing, the count is the same on any machine, so a change to the store's
// rows, indexes or commits shows in it exactly.

/** Executions run before the count, so that both files hold a hundred threads and their indexes have some depth. */
const WARMUP = 100;
/** Executions counted: few enough that the log stays below SQLite's 1,000-page automatic checkpoint. */
const COUNTED = 10;
/** How long after an execution returned its late writes are waited for: well past the store's hold of a few ms. */
const LATE_WRITES_MS = 25;
/** Where SQLite checkpoints a log on its own (its default `wal_autocheckpoint`, and the store's inline one). */
const AUTOCHECKPOINT_PAGES = 1_000;
/** The write-ahead log's header and each frame's, in bytes (SQLite's file format). */
const WAL_HEADER = 32;
const FRAME_HEADER = 24;
/** The first word of a write-ahead log, by the byte order of its checksums. */
const WAL_MAGIC = [0x377f0682, 0x377f0683];

/** The better-sqlite3 calls the count needs (the bench does not need its type package). */
type CountingDatabase = {
  pragma(source: string): unknown;
  prepare(sql: string): { all(): unknown[] };
  close(): void;
};
const Database = createRequire(import.meta.url)("better-sqlite3") as new (
  file: string,
  options?: { readonly?: boolean },
) => CountingDatabase;

/** One side's count: per execution, pages written and commits, and pages by the table or index they belong to. */
export interface WalPages {
  /** Executions run on the fresh files before the count, and counted. */
  readonly warmup: number;
  readonly executions: number;
  readonly pages: number;
  readonly commits: number;
  /** Pages per execution by table or index (as `dbstat` names them), most first. */
  readonly byTree: readonly TreePages[];
  /**
   * The execution's commits in the order it makes them, each with its pages (mean over the counted
   * executions); undefined when they did not all make the same number of commits.
   */
  readonly byCommit: readonly { readonly pages: number; readonly byTree: readonly TreePages[] }[] | undefined;
}

/** Pages written to one table or index. */
export interface TreePages {
  readonly tree: string;
  readonly pages: number;
}

/**
 * Counts, for each side of `scenario` on SQLite, the pages its executions write: on fresh files beside
 * the run's (`dir`), with the side's durability, its log checkpointed only when the count allows (inline
 * for AGBoss's store, so no checkpoint thread empties the log while it is read).
 */
export async function walPagesOfPair(
  scenario: PairScenario,
  context: ScenarioContext,
): Promise<{ agboss: WalPages; langgraph: WalPages }> {
  const dir = join(context.dir, "wal-pages");
  mkdirSync(dir, { recursive: true });
  const counting: ScenarioContext = {
    ...context,
    dir,
    walCheckpoints: "inline",
    trace: undefined,
    sqlTimings: undefined,
  };
  const files = pairBackend(counting, scenario.appName).sqlKeys;
  if (files === undefined) throw new Error("pages are counted on SQLite only");
  const agboss = await countSide(scenario, counting, "agboss", files.agboss);
  const langgraph = await countSide(scenario, counting, "langgraph", files.langgraph);
  return { agboss, langgraph };
}

async function countSide(
  scenario: PairScenario,
  context: ScenarioContext,
  which: SideName,
  file: string,
): Promise<WalPages> {
  const opened = await scenario.openSide(context, which, new PhaseTimings());
  try {
    for (let i = 0; i < WARMUP; i += 1) await opened.side.runOnce(i);
    await lateWrites();
    // Empties the log, so that from here on it holds only the counted executions' frames.
    const other = new Database(file);
    try {
      const [result] = other.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      if (result?.busy !== 0) throw new Error(`${which}: the log could not be emptied before the count`);
    } finally {
      other.close();
    }
    // Where each counted execution's frames end in the log, so its commits can be told apart.
    const ends: number[] = [];
    const logSize = async () => {
      await lateWrites();
      return statSync(`${file}-wal`).size;
    };
    await opened.side.runOnce(WARMUP);
    ends.push(await logSize());
    // The log's generation as the first counted commit began it: a checkpoint that restarts the log
    // later (the automatic one, say) starts a new generation, and the count refuses it.
    const generation = generationOf(readFileSync(`${file}-wal`), which);
    for (let i = 1; i < COUNTED; i += 1) {
      await opened.side.runOnce(WARMUP + i);
      ends.push(await logSize());
    }
    return readLog(file, ends, which, generation);
  } finally {
    await opened.side.close();
  }
}

/**
 * Waits for what an execution may still write after it returned (AGBoss's store writes a held
 * checkpoint on a timer of a few milliseconds), so that it is counted with that execution.
 */
function lateWrites(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, LATE_WRITES_MS));
}

/** A log's checkpoint sequence number and first salt, which change whenever the log restarts. */
function generationOf(log: Buffer, which: SideName): string {
  if (log.length < WAL_HEADER || !WAL_MAGIC.includes(log.readUInt32BE(0))) {
    throw new Error(`${which}: no write-ahead log to read`);
  }
  return `${log.readUInt32BE(12)}/${log.readUInt32BE(16)}`;
}

/**
 * Reads `file`'s log (while its side is still open, so nothing has checkpointed it away); `ends` is the
 * log's size after each counted execution.
 */
function readLog(file: string, ends: readonly number[], which: SideName, generation: string): WalPages {
  const executions = ends.length;
  const log = readFileSync(`${file}-wal`);
  if (generationOf(log, which) !== generation) {
    throw new Error(`${which}: the log restarted during the count (a checkpoint copied it into the file)`);
  }
  const pageSize = log.readUInt32BE(8);
  const salts = [log.readUInt32BE(16), log.readUInt32BE(20)];
  const frameSize = FRAME_HEADER + pageSize;
  const owners = treesByPage(file);
  const byTree = new Map<string, number>();
  // Each execution's commits, in order, each as its pages by table or index.
  const executionCommits: Map<string, number>[][] = ends.map(() => []);
  let commit = new Map<string, number>();
  let frames = 0;
  let commits = 0;
  let lastCommits = false;
  for (let at = WAL_HEADER; at + frameSize <= log.length; at += frameSize) {
    // A frame of an earlier generation of the log (before a checkpoint restarted it) is not this count's.
    if (log.readUInt32BE(at + 8) !== salts[0] || log.readUInt32BE(at + 12) !== salts[1]) break;
    const page = log.readUInt32BE(at);
    frames += 1;
    const tree = page === 1 ? "(page 1: the file's header)" : (owners.get(page) ?? "(free pages)");
    byTree.set(tree, (byTree.get(tree) ?? 0) + 1);
    commit.set(tree, (commit.get(tree) ?? 0) + 1);
    lastCommits = log.readUInt32BE(at + 4) !== 0;
    if (lastCommits) {
      commits += 1;
      const execution = ends.findIndex((end) => at + frameSize <= end);
      if (execution === -1)
        throw new Error(`${which}: the log holds a commit made after the last counted execution`);
      executionCommits[execution]?.push(commit);
      commit = new Map();
    }
  }
  if (frames >= AUTOCHECKPOINT_PAGES) {
    // At 1,000 pages the next commit checkpoints, so a count that reaches it may have lost frames:
    // a scenario writing 100 pages an execution or more needs fewer counted executions.
    throw new Error(
      `${which}: the log reached SQLite's automatic checkpoint (${frames} pages); count fewer executions`,
    );
  }
  if (WAL_HEADER + frames * frameSize !== log.length || !lastCommits) {
    throw new Error(`${which}: the log holds frames of no commit of the count (${frames} read)`);
  }
  return {
    warmup: WARMUP,
    executions,
    pages: frames / executions,
    commits: commits / executions,
    byTree: perExecution(byTree, executions),
    byCommit: inCommitOrder(executionCommits),
  };
}

/** Pages per execution by table or index, most first. */
function perExecution(pages: ReadonlyMap<string, number>, executions: number): TreePages[] {
  return [...pages]
    .map(([tree, count]) => ({ tree, pages: count / executions }))
    .sort((a, b) => b.pages - a.pages || a.tree.localeCompare(b.tree));
}

/**
 * The executions' commits by their place in the execution, each the mean over the executions; undefined
 * when the executions made different numbers of commits (places would not match).
 */
function inCommitOrder(
  executions: readonly (readonly ReadonlyMap<string, number>[])[],
): WalPages["byCommit"] {
  const count = executions[0]?.length ?? 0;
  if (count === 0 || executions.some((commits) => commits.length !== count)) return undefined;
  return Array.from({ length: count }, (_, place) => {
    const trees = new Map<string, number>();
    for (const commits of executions) {
      for (const [tree, pages] of commits[place] ?? []) trees.set(tree, (trees.get(tree) ?? 0) + pages);
    }
    const byTree = perExecution(trees, executions.length);
    return { pages: byTree.reduce((sum, t) => sum + t.pages, 0), byTree };
  });
}

/** Which table or index each page of `file` belongs to now (its log included), from SQLite's `dbstat`. */
function treesByPage(file: string): Map<number, string> {
  const reader = new Database(file, { readonly: true });
  try {
    const rows = reader.prepare("select name, pageno from dbstat").all() as {
      name: string;
      pageno: number;
    }[];
    return new Map(rows.map((row) => [row.pageno, row.name]));
  } finally {
    reader.close();
  }
}
