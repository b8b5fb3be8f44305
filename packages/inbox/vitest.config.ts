import { defineProject } from "vitest/config";
import { agbossVitest, postgresSetup } from "../../vitest.shared.js";

// The page's files are built first (esbuild, well under a second): the server reads them from dist/client.
export default defineProject(
  agbossVitest({ globalSetup: [postgresSetup, "./test/build-page.ts"], fileParallelism: false }),
);
