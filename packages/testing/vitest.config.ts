import { configDefaults, defineProject } from "vitest/config";
import { agbossVitest } from "../../vitest.shared.js";

// test/fixtures/decorators holds small projects that test/vitest-decorators.test.ts runs with a vitest
// of their own; they are not this package's tests.
export default defineProject(
  agbossVitest({ exclude: [...configDefaults.exclude, "test/fixtures/decorators/**"] }),
);
