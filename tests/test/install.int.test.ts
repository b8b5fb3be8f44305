// The published packages, installed the way an application installs them: `pnpm pack` of each, then
// `npm install` of the tarballs into a fresh project outside the workspace, with its own zod (another
// minor than the one AGBoss builds with) and whatever the registry serves for the peer ranges. The
// project type-checks with tsc, and runs: an execution to its pause, then the answer from a second app
// over the same SQLite file.
import { execFile } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const run = promisify(execFile);
const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const fixture = join(repo, "tests", "install-app");

/** The zod the application brings: a zod 4 minor other than the workspace's, the lowest `@agboss/core` accepts. */
const APP_ZOD = "4.2.1";
/** The packages the application installs from their tarballs. */
const PACKED = ["core", "store-kysely", "store-sqlite", "provider-openai"] as const;

const dir = mkdtempSync(join(tmpdir(), "agboss-install-"));
const app = join(dir, "app");
let npmOutput = "";

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
}

/** Whether `version` is in a range of the form the packages' `engines.node` uses (`^a.b.c || >=a.b.c`). */
function inEngines(range: string, version: string): boolean {
  const [major, minor, patch] = version.replace(/^v/, "").split(".").map(Number) as [number, number, number];
  return range.split("||").some((part) => {
    const match = /^\s*(\^|>=)(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    if (match === null) throw new Error(`engines range part not understood: ${part}`);
    const [, op, a, b, c] = match;
    const floor = [Number(a), Number(b), Number(c)];
    const cmp = major - floor[0]! || minor - floor[1]! || patch - floor[2]!;
    return op === ">=" ? cmp >= 0 : major === floor[0] && cmp >= 0;
  });
}

async function pnpm(args: string[], cwd = repo): Promise<string> {
  const { stdout } = await run(process.execPath, [join(repo, "scripts", "pnpm.mjs"), ...args], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

beforeAll(async () => {
  // dist/ is what gets packed: build what is not built yet (turbo answers from its cache otherwise).
  await pnpm([
    "exec",
    "turbo",
    "run",
    "build",
    ...PACKED.map((name) => `--filter=@agboss/${name}`),
    "--output-logs=errors-only",
  ]);
  const packs = join(dir, "packs");
  mkdirSync(packs);
  const tarballs: Record<string, string> = {};
  for (const name of PACKED) {
    await pnpm(["pack", "--pack-destination", packs], join(repo, "packages", name));
    const file = readdirSync(packs).find((f) => f.startsWith(`agboss-${name}-`) && f.endsWith(".tgz"));
    if (file === undefined) throw new Error(`pnpm pack wrote no tarball for @agboss/${name}`);
    tarballs[`@agboss/${name}`] = `file:${join(packs, file)}`;
  }

  cpSync(fixture, app, { recursive: true });
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify(
      {
        name: "agboss-install-check",
        private: true,
        type: "module",
        dependencies: {
          "@agboss/core": tarballs["@agboss/core"],
          "@agboss/store-sqlite": tarballs["@agboss/store-sqlite"],
          "@agboss/provider-openai": tarballs["@agboss/provider-openai"],
          zod: APP_ZOD,
        },
        devDependencies: { "@types/node": "^22.20.0" },
        // store-sqlite's own dependency, from its tarball too: it is not on the registry.
        overrides: { "@agboss/store-kysely": tarballs["@agboss/store-kysely"] },
      },
      null,
      2,
    ),
  );
  // better-sqlite3 compiles its addon on install (a minute and more); the workspace's copy is the same
  // version, built for this Node, so it is copied in instead. Every other install script runs.
  const { stdout, stderr } = await run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=warn"],
    { cwd: app, maxBuffer: 64 * 1024 * 1024 },
  );
  npmOutput = `${stdout}\n${stderr}`;
  const built = join(
    dirname(
      createRequire(join(repo, "packages", "store-sqlite", "package.json")).resolve(
        "better-sqlite3/package.json",
      ),
    ),
    "build",
    "Release",
    "better_sqlite3.node",
  );
  const target = join(app, "node_modules", "better-sqlite3", "build", "Release");
  mkdirSync(target, { recursive: true });
  copyFileSync(built, join(target, "better_sqlite3.node"));
}, 600_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("the packed packages in a fresh application", () => {
  test("install the application's zod, and one LangGraph and one LangChain core, shared with @agboss/core", () => {
    const modules = join(app, "node_modules");
    expect(readJson(join(modules, "zod", "package.json")).version).toBe(APP_ZOD);
    expect(existsSync(join(modules, "@agboss", "core", "node_modules"))).toBe(false);
    const copies = (name: string) =>
      readdirSync(modules, { recursive: true, encoding: "utf8" }).filter((p) =>
        p.endsWith(join(name, "package.json")),
      );
    expect(copies(join("@langchain", "langgraph"))).toEqual([
      join("@langchain", "langgraph", "package.json"),
    ]);
    expect(copies(join("@langchain", "core"))).toEqual([join("@langchain", "core", "package.json")]);
  });

  test("install without an engine warning on a Node the packages support", () => {
    const engines = (readJson(join(repo, "packages", "core", "package.json")).engines as { node: string })
      .node;
    if (!inEngines(engines, process.version)) {
      // The workspace still runs on older Node for development; the claim is about supported ones.
      expect(inEngines(engines, "26.0.0")).toBe(true);
      return;
    }
    expect(npmOutput).not.toContain("EBADENGINE");
  });

  test("type-check with tsc: the application's zod fields fit the DTOs, the tool's input type is its DTO", async () => {
    const tsc = join(repo, "node_modules", ".bin", "tsc");
    const result = await run(tsc, ["-p", "tsconfig.json"], { cwd: app }).catch(
      (error: { stdout?: string; stderr?: string }) => ({
        stdout: error.stdout ?? "",
        stderr: error.stderr ?? "failed",
      }),
    );
    expect(`${result.stdout}${result.stderr}`).toBe("");
  }, 120_000);

  test("run: the execution pauses, a second app over the same SQLite file answers, the tool runs once", async () => {
    const { stdout } = await run(
      process.execPath,
      [join(app, "dist", "main.js"), join(dir, "refunds.sqlite")],
      {
        cwd: app,
        timeout: 60_000,
      },
    );
    expect(JSON.parse(stdout.trim().split("\n").at(-1) as string)).toEqual({
      paused: "paused",
      pending: 1,
      refundsWhilePaused: 0,
      resumed: "completed",
      output: { text: "Refunded ord_1." },
      refunds: ["ord_1"],
    });
  }, 60_000);
});
