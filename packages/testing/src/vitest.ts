import { transform } from "esbuild";
import type { Plugin } from "vitest/config";

/** Options of {@link agbossDecorators}. */
export interface AgbossDecoratorsOptions {
  /**
   * The syntax the lowered code may use: an esbuild target. Default: the running Node version
   * (`node20.11.0`, …), so decorators, `accessor` fields and anything else it cannot parse are lowered.
   */
  readonly target?: string;
}

/** A source file vite transforms: `.ts`, `.mts`, `.cts`, `.tsx`, `.js`, `.mjs`, `.cjs`, `.jsx`. */
const SOURCE_FILE = /\.(?:[cm]?[jt]s|[jt]sx)$/;

/**
 * An `@` that may start a decorator: not inside a word, a path, a string's first character or an
 * e-mail address. A false positive only costs a transform that changes nothing.
 */
const MAYBE_DECORATOR = /(?<![\w$"'`/.@\\])@[\p{ID_Start}$_(]/u;

/**
 * The vite plugin that makes AGBoss decorators run under vitest with either kind of decorators.
 *
 * vite 8 compiles TypeScript with Oxc, which lowers only TypeScript's `experimentalDecorators` (and
 * only when the file's tsconfig turns them on); standard (TC39) decorators are left in the code, and
 * Node stops at the first `@` with `SyntaxError: Invalid or unexpected token`. This plugin runs after
 * vite's own transform and, in a file that still has decorators, lowers them with esbuild, with their
 * standard semantics (`context.addInitializer`, `accessor` fields, metadata). A file whose tsconfig has
 * `experimentalDecorators` is lowered by vite as before and passes through unchanged.
 *
 * @example
 * // vitest.config.ts
 * import { agbossDecorators } from "@agboss/testing/vitest";
 * import { defineConfig } from "vitest/config";
 *
 * export default defineConfig({ plugins: [agbossDecorators()] });
 */
export function agbossDecorators(options: AgbossDecoratorsOptions = {}): Plugin {
  const target = options.target ?? `node${process.versions.node}`;
  return {
    name: "agboss:decorators",
    async transform(code, id) {
      const [file = id] = id.split("?");
      if (!SOURCE_FILE.test(file) || file.includes("/node_modules/") || !MAYBE_DECORATOR.test(code)) {
        return null;
      }
      const lowered = await transform(code, {
        loader: file.endsWith("x") ? "jsx" : "js",
        target,
        supported: { decorators: false },
        sourcemap: "external",
        sourcefile: file,
      });
      return { code: lowered.code, map: lowered.map };
    },
  };
}
