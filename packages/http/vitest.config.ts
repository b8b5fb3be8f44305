import { defineProject } from "vitest/config";
import { agbossVitest } from "../../vitest.shared.js";

export default defineProject(agbossVitest());
