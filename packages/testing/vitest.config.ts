import { configDefaults, defineProject } from "vitest/config";
import { agbossVitest } from "../../vitest.shared.js";

// test/fixtures/decorators holds small projects that test/vitest-decorators.test.ts runs with a vitest
// of their own; they are not this package's tests. Type-level tests (*.test-d.ts) are type-checked by
// tsc in the same run: a type error (or an unused @ts-expect-error) inside a test fails that test.
export default defineProject(
  agbossVitest({
    exclude: [...configDefaults.exclude, "test/fixtures/decorators/**"],
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
  }),
);
