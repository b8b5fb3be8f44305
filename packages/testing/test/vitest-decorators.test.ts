import { execFile } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";

// Runs vitest (and tsc) in two small projects, test/fixtures/decorators/{standard,legacy}: the same
// AGBoss application with standard (TC39) decorators and with experimentalDecorators, each with the
// vitest.config.ts the docs show. Each is copied to a temporary folder whose node_modules link to this
// workspace's packages.

const testingPackage = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const repository = resolve(testingPackage, "../..");
const fixtures = join(testingPackage, "test/fixtures/decorators");
const scratch = mkdtempSync(join(tmpdir(), "agboss-decorators-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const real = (path: string) => realpathSync(path);
const links: Record<string, string> = {
  "@agboss/core": join(repository, "packages/core"),
  "@agboss/testing": testingPackage,
  vitest: real(join(testingPackage, "node_modules/vitest")),
  zod: real(join(testingPackage, "node_modules/zod")),
  "@types/node": real(join(repository, "node_modules/@types/node")),
  tsx: real(join(repository, "node_modules/tsx")),
  typescript: real(join(repository, "node_modules/typescript")),
};

// In this repository the packages resolve to their TypeScript sources (the @agboss/source export
// condition) instead of a dist/ that may not be built; a published install needs none of this.
const SOURCES = `{ resolve: { conditions: ["@agboss/source"] }, ssr: { resolve: { conditions: ["@agboss/source"] } } }`;

function project(kind: "standard" | "legacy", copy: string = kind): string {
  const dir = join(scratch, copy);
  cpSync(join(fixtures, kind), dir, { recursive: true });
  for (const [name, target] of Object.entries(links)) {
    mkdirSync(dirname(join(dir, "node_modules", name)), { recursive: true });
    symlinkSync(target, join(dir, "node_modules", name), "dir");
  }
  const tsconfig = JSON.parse(readFileSync(join(dir, "tsconfig.json"), "utf8"));
  tsconfig.compilerOptions.customConditions = ["@agboss/source"];
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
  writeFileSync(
    join(dir, "vitest.workspace-sources.ts"),
    `import { mergeConfig } from "vitest/config";\nimport project from "./vitest.config.ts";\n\nexport default mergeConfig(project, ${SOURCES});\n`,
  );
  writeFileSync(join(dir, "vitest.without-plugin.ts"), `export default ${SOURCES};\n`);
  return dir;
}

interface Run {
  readonly code: number;
  readonly output: string;
}

function node(cwd: string, args: string[]): Promise<Run> {
  // The child is a vitest of its own: nothing of this worker's vitest environment goes along.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST") && key !== "NODE_OPTIONS"),
  );
  return new Promise((done) => {
    execFile(process.execPath, args, { cwd, env, timeout: 120_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      done({ code, output: `${stdout}\n${stderr}` });
    });
  });
}

/** `vitest run` in `dir` with a config file, its vitest.config.ts loaded natively as a user's would be. */
async function vitest(dir: string, config: string) {
  const report = join(dir, `report-${config}.json`);
  const run = await node(dir, [
    "--import",
    "tsx",
    "--conditions=@agboss/source",
    "node_modules/vitest/vitest.mjs",
    "run",
    "--config",
    config,
    "--configLoader",
    "native",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${report}`,
  ]);
  const counts = (() => {
    try {
      const json = JSON.parse(readFileSync(report, "utf8"));
      return { passed: json.numPassedTests as number, failed: json.numFailedTests as number };
    } catch {
      return undefined;
    }
  })();
  return { ...run, counts };
}

const tsc = (dir: string) => node(dir, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"]);

// Each case starts vitest (and tsc) in a child process: seconds each, more on a busy machine.
describe("@agboss/testing/vitest", { timeout: 120_000 }, () => {
  test("a project with standard (TC39) decorators and no experimentalDecorators type-checks and passes under vitest", async () => {
    const dir = project("standard");
    const checked = await tsc(dir);
    expect(checked.output.trim()).toBe("");
    expect(checked.code).toBe(0);
    const run = await vitest(dir, "vitest.workspace-sources.ts");
    expect(run.counts, run.output).toEqual({ passed: 1, failed: 0 });
    expect(run.code, run.output).toBe(0);
  });

  test("without the plugin, the same project fails on the decorators' syntax", async () => {
    const run = await vitest(project("standard", "standard-without-plugin"), "vitest.without-plugin.ts");
    expect(run.code).not.toBe(0);
    expect(run.output).toContain("SyntaxError");
  });

  test("a project with experimentalDecorators type-checks and passes under vitest with the same config", async () => {
    const dir = project("legacy");
    const checked = await tsc(dir);
    expect(checked.output.trim()).toBe("");
    expect(checked.code).toBe(0);
    const run = await vitest(dir, "vitest.workspace-sources.ts");
    expect(run.counts, run.output).toEqual({ passed: 1, failed: 0 });
    expect(run.code, run.output).toBe(0);
  });
});
