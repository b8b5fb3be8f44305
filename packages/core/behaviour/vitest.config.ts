import { defineProject } from "vitest/config";
import { agbossVitest, postgresSetup } from "../../../vitest.shared.js";

// Type-level tests (*.test-d.ts) run with the others: vitest type-checks them with tsc, and a type
// error (or an unused @ts-expect-error) inside a test fails that test.
export default defineProject(
  agbossVitest({
    globalSetup: [postgresSetup],
    typecheck: { enabled: true, include: ["test/**/*.test-d.ts"], tsconfig: "./tsconfig.json" },
  }),
);
