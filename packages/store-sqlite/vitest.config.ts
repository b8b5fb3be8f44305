import { defineProject } from "vitest/config";
import { agbossVitest } from "../../vitest.shared.js";

// `@langchain/langgraph-checkpoint-validation` calls describe/it/expect as globals.
export default defineProject(agbossVitest({ globals: true }));
