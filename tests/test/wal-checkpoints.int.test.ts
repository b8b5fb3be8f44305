import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { SqliteStore, SqliteWalCheckpoints } from "@agboss/store-sqlite";
import { sql } from "kysely";
import { afterAll, describe, expect, test } from "vitest";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const worker = join(here, "..", "src", "wal-checkpoint-worker.ts");
const args = (path: string, mode: string) => [
  "--import",
  "tsx",
  "--conditions=@agboss/source",
  worker,
  path,
  mode,
];

/** Opens the file again in this process, recovering its log as any later process would. */
const reopen = (path: string) => SqliteStore.open({ path, walCheckpoints: SqliteWalCheckpoints.Inline });

/** Starts a writer and resolves with it once it has acknowledged `acks` rows. */
function writerAcknowledging(
  path: string,
  acks: number,
): Promise<{ child: ChildProcess; last: () => number }> {
  const child = spawn(process.execPath, args(path, "write"), {
    cwd: join(here, ".."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let last = -1;
  let buffered = "";
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the writer exited (${code}) early: ${stderr}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) if (line.startsWith("ack ")) last = Number(line.slice(4));
      if (last + 1 >= acks) resolve({ child, last: () => last });
    });
  });
}

describe("SQLite WAL checkpoints on a background thread, in real processes", () => {
  const dir = mkdtempSync(join(tmpdir(), "agboss-wal-processes-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("a process that closes its store ends after the close has returned, not before", async () => {
    const path = join(dir, "close.sqlite");
    const { stdout } = await run(process.execPath, args(path, "close"), {
      cwd: join(here, ".."),
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe("closed");
    const store = await reopen(path);
    expect((await sql<{ n: number }>`select count(*) as n from filler`.execute(store.db)).rows).toEqual([
      { n: 200 },
    ]);
    await store.close();
  }, 90_000);

  test("killed with SIGKILL while its thread copies the log: every acknowledged row is there, the file intact", async () => {
    for (const [round, acks] of [1_500, 2_300, 3_100].entries()) {
      const path = join(dir, `killed-${round}.sqlite`);
      const { child, last } = await writerAcknowledging(path, acks);
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
      const acknowledged = last();
      const store = await reopen(path);
      const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(store.db);
      expect(check.rows).toEqual([{ integrity_check: "ok" }]);
      const counted = await sql<{
        n: number;
        top: number;
      }>`select count(*) as n, max(id) as top from filler`.execute(store.db);
      const { n, top } = counted.rows[0] as { n: number; top: number };
      // Rows are committed in order: all of 0..top are there, and top is at least the last acknowledged.
      expect(top).toBeGreaterThanOrEqual(acknowledged);
      expect(n).toBe(top + 1);
      await store.close();
    }
  }, 180_000);
});
