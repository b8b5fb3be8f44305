#!/usr/bin/env node
// The newest Node LTS, from the npm registry, whatever Node runs this script.
//
//   node scripts/lts-node.mjs                 prints the directory of that Node (bin/node, include/node)
//   node scripts/lts-node.mjs -- <cmd> [args] runs <cmd> with that Node first on PATH, and native addons
//                                             (better-sqlite3) built against its headers
//
// The registry's `node-<platform>-<arch>` packages hold Node's official builds, headers included. The
// newest release of LTS_LINE (AGBOSS_NODE_LINE=22 for another line) is fetched once into
// ~/.cache/agboss/node/<version> (AGBOSS_NODE_CACHE to put it elsewhere); with the registry out of
// reach, the newest release already there is used.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * The newest line in Active LTS (Node 26 since 2026-10-28; the schedule is
 * https://github.com/nodejs/Release#release-schedule). Move it when the next line enters LTS.
 */
export const LTS_LINE = 26;

const line = Number(process.env.AGBOSS_NODE_LINE || LTS_LINE);
const platformPackage = `node-${process.platform === "win32" ? "win" : process.platform}-${process.arch}`;
const cache = process.env.AGBOSS_NODE_CACHE || join(homedir(), ".cache", "agboss", "node");

function npm(args) {
  const run = spawnSync("npm", args, { encoding: "utf8", shell: process.platform === "win32" });
  return run.status === 0 ? run.stdout : undefined;
}

function byVersion(a, b) {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}

function newestPublished() {
  const out = npm(["view", `${platformPackage}@${line}`, "version", "--json"]);
  if (out === undefined) return undefined;
  const versions = [].concat(JSON.parse(out)).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
  return versions.sort(byVersion).at(-1);
}

function newestCached() {
  if (!existsSync(cache)) return undefined;
  return readdirSync(cache)
    .filter((v) => v.startsWith(`${line}.`) && existsSync(join(cache, v, "bin", "node")))
    .sort(byVersion)
    .at(-1);
}

/** The directory of the newest LTS Node, fetched when missing. */
export function ltsNode() {
  const version = newestPublished() ?? newestCached();
  if (version === undefined) {
    throw new Error(
      `Cannot find ${platformPackage}@${line} on the npm registry, and no copy is cached in ${cache}.`,
    );
  }
  const dir = join(cache, version);
  if (existsSync(join(dir, "bin", "node"))) return dir;
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, ".fetch-"));
  try {
    const packed = npm(["pack", `${platformPackage}@${version}`, "--pack-destination", work, "--json"]);
    if (packed === undefined) throw new Error(`npm pack ${platformPackage}@${version} failed`);
    const [{ filename }] = JSON.parse(packed);
    const untar = spawnSync("tar", ["xzf", join(work, filename), "-C", work], { stdio: "inherit" });
    if (untar.status !== 0) throw new Error(`Cannot unpack ${filename}`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(join(work, "package"), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = ltsNode();
  const dash = process.argv.indexOf("--");
  if (dash === -1) {
    console.log(dir);
  } else {
    const [cmd, ...args] = process.argv.slice(dash + 1);
    if (cmd === undefined) throw new Error("usage: lts-node.mjs -- <command> [args]");
    const sep = process.platform === "win32" ? ";" : ":";
    const env = {
      ...process.env,
      PATH: `${join(dir, "bin")}${sep}${process.env.PATH ?? ""}`,
      npm_config_nodedir: dir,
    };
    const run = spawnSync(cmd, args, { stdio: "inherit", env });
    process.exit(run.status ?? 1);
  }
}
