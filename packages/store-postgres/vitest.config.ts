import { defineProject } from "vitest/config";
import { agbossVitest } from "../../vitest.shared.js";

// `@langchain/langgraph-checkpoint-validation` calls describe/it/expect as globals. The global setup
// fails the run, saying how to start PostgreSQL, when the server is down: these tests never skip.
export default defineProject(agbossVitest({ globals: true, globalSetup: ["./test/global-setup.ts"] }));
