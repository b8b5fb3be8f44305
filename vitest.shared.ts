import type { ViteUserConfig } from "vitest/config";

/**
 * Shared vitest settings for every package: workspace packages resolve to their sources, and
 * decorators are lowered in their legacy form (vite's transformer lowers only that kind; the
 * AGBoss decorators accept both).
 */
export function agbossVitest(overrides: ViteUserConfig["test"] = {}): ViteUserConfig {
  return {
    resolve: { conditions: ["@agboss/source"] },
    ssr: { resolve: { conditions: ["@agboss/source"] } },
    oxc: { decorator: { legacy: true } },
    test: {
      testTimeout: 30_000,
      hookTimeout: 30_000,
      ...overrides,
    },
  } as ViteUserConfig;
}
