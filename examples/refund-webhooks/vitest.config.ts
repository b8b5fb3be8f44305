import { defineProject } from "vitest/config";
import { agbossVitest, postgresSetup } from "../../vitest.shared.js";

export default defineProject(agbossVitest({ globalSetup: [postgresSetup] }));
