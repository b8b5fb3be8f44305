import { configDefaults, defineProject } from "vitest/config";
import { agbossVitest } from "../../vitest.shared.js";

// behaviour/ is a workspace package of its own (@agboss/core-behaviour), run by its own vitest.
export default defineProject(agbossVitest({ exclude: [...configDefaults.exclude, "behaviour/**"] }));
