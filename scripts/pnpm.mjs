#!/usr/bin/env node
// Runs the pinned pnpm through npx, so a machine with only Node 20 and npm can use the workspace.
// When Node's headers are installed locally, native addons (better-sqlite3) build against them
// instead of downloading them.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

const PNPM = "pnpm@12.4.2";
const env = { ...process.env };
const prefix = dirname(dirname(process.execPath));
if (!env.npm_config_nodedir && existsSync(join(prefix, "include", "node", "node.h"))) {
  env.npm_config_nodedir = prefix;
}
const args = process.argv.slice(2);
const direct = spawnSync("pnpm", ["--version"], { encoding: "utf8", env });
const usePinned = direct.status === 0 && direct.stdout.trim() === PNPM.split("@")[1];
const [cmd, cmdArgs] = usePinned ? ["pnpm", args] : ["npx", ["--yes", PNPM, ...args]];
const run = spawnSync(cmd, cmdArgs, { stdio: "inherit", env });
process.exit(run.status ?? 1);
