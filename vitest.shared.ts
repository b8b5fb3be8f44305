import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ViteUserConfig } from "vitest/config";

/**
 * The global setup of every package whose tests need PostgreSQL: it finds the server, or starts an
 * embedded one for the run when none answers (see vitest.postgres.ts). List it first in `globalSetup`.
 */
export const postgresSetup = fileURLToPath(new URL("./vitest.postgres.ts", import.meta.url));

/**
 * Shared vitest settings for every package: workspace packages resolve to their sources, and
 * decorators are lowered in their legacy form (vite's transformer lowers only that kind; the
 * AGBoss decorators accept both).
 */
export function agbossVitest(overrides: ViteUserConfig["test"] = {}): ViteUserConfig {
  const jsonDir = process.env.AGBOSS_VITEST_JSON_DIR;
  const name = basename(process.cwd());
  const reporters =
    jsonDir === undefined
      ? ["default"]
      : ["default", ["json", { outputFile: join(jsonDir, `${name}.json`) }]];
  return {
    resolve: { conditions: ["@agboss/source"] },
    ssr: { resolve: { conditions: ["@agboss/source"] } },
    oxc: { decorator: { legacy: true } },
    test: {
      reporters,
      testTimeout: 30_000,
      hookTimeout: 30_000,
      ...overrides,
    },
  } as ViteUserConfig;
}
