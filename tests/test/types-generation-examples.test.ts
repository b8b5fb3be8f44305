import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

/**
 * `agboss types` on every example application: the command succeeds, and each example's sources
 * compile together with the declarations it wrote. Where TypeScript cannot see a type by itself
 * (a start's finish, a role's DTOs), the examples are what the generated file is checked against.
 */

const run = promisify(execFile);
const testsDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const rootDir = join(testsDir, "..");

const EXAMPLES: Record<string, readonly string[]> = {
  "flow-patterns": [
    "src/basics/refund-desk-application.ts",
    "src/approvals/office-application.ts",
    "src/parallel/review-application.ts",
    "src/quorum/release-application.ts",
    "src/questions/returns-application.ts",
  ],
  "refund-webhooks": ["src/desk.ts"],
  "slack-deploy-gate": ["src/deploy-gate.ts"],
};

async function cliBin(): Promise<string> {
  const manifest = createRequire(import.meta.url).resolve("@agboss/cli/package.json");
  const { bin } = JSON.parse(await readFile(manifest, "utf8")) as { bin: Record<string, string> };
  return join(dirname(manifest), (bin.agboss as string).replace(/^\.\/dist\/(.+)\.js$/, "src/$1.ts"));
}

const posix = (path: string) => path.split(sep).join("/");

describe("agboss types on the examples", () => {
  let dir: string;
  const generated = new Map<string, { out: string; stdout: string; stderr: string; code?: number }>();

  beforeAll(async () => {
    const cache = join(testsDir, "node_modules", ".cache");
    await mkdir(cache, { recursive: true });
    dir = await mkdtemp(join(cache, "agboss-types-examples-"));
    const bin = await cliBin();
    const jobs = Object.entries(EXAMPLES).flatMap(([example, entries]) =>
      entries.map(async (entry) => {
        const out = join(dir, example, `${basename(entry, ".ts")}.d.ts`);
        const result = await run(
          process.execPath,
          ["--import", "tsx", "--conditions=@agboss/source", bin, "types", entry, "--out", out],
          { cwd: join(rootDir, "examples", example), timeout: 90_000 },
        ).catch((error: { code?: number; stdout?: string; stderr?: string }) => ({
          code: error.code,
          stdout: error.stdout ?? "",
          stderr: error.stderr ?? "",
        }));
        generated.set(`${example}/${entry}`, { out, ...result });
      }),
    );
    await Promise.all(jobs);
  }, 180_000);

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  test("[RP-12] the command types every example application, its workflow start included", () => {
    for (const [key, result] of generated) {
      expect({ key, stderr: result.stderr, code: result.code }).toEqual({ key, stderr: "", code: undefined });
      expect(result.stdout).toMatch(/: 1 workflow start\(s\), [1-9]\d* tool\(s\)/);
    }
    expect(generated.size).toBe(Object.values(EXAMPLES).flat().length);
  });

  test.each(Object.keys(EXAMPLES))(
    "[RP-12] %s compiles with the declarations written for it",
    async (example) => {
      const files = [...generated.entries()]
        .filter(([key]) => key.startsWith(`${example}/`))
        .map(([, result]) => posix(relative(join(dir, example), result.out)));
      const tsconfig = join(dir, example, "tsconfig.json");
      await writeFile(
        tsconfig,
        JSON.stringify({
          extends: posix(relative(join(dir, example), join(rootDir, "tsconfig.base.json"))),
          compilerOptions: { noEmit: true },
          include: [posix(relative(join(dir, example), join(rootDir, "examples", example, "src"))), ...files],
        }),
      );
      const tsc = join(rootDir, "node_modules", ".bin", "tsc");
      const output = await run(tsc, ["-p", tsconfig, "--pretty", "false"], {
        cwd: testsDir,
        timeout: 120_000,
      }).then(
        ({ stdout }) => stdout,
        (error: { stdout?: string }) => error.stdout ?? "",
      );
      // the example's own files and the declarations; core's sources may be mid-edit elsewhere
      const errors = output
        .split("\n")
        .filter(
          (line) => /\): error /.test(line) && (line.includes(`examples/${example}/`) || line.includes(dir)),
        );
      expect(errors).toEqual([]);
    },
    120_000,
  );
});
