import { basename, join } from "node:path";
import type { ViteUserConfig } from "vitest/config";

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
