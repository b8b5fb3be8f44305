import { defineProject } from "vitest/config";
import { agbossVitest, postgresSetup } from "../../vitest.shared.js";

// `@langchain/langgraph-checkpoint-validation` calls describe/it/expect as globals. The first global
// setup finds the server or starts an embedded one; the second fails the run, saying what to do, when
// the server cannot be reached: these tests never skip.
export default defineProject(
  agbossVitest({ globals: true, globalSetup: [postgresSetup, "./test/global-setup.ts"] }),
);
