// What every published package promises about its installation: the same supported Node versions as
// the workspace, and the libraries whose types reach the application's code as peer dependencies with
// a range (kept as exact dev dependencies for the workspace's own builds), never a copy of their own.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly engines?: { readonly node?: string };
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const read = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Manifest;
const root = read(join(repo, "package.json"));
const published = readdirSync(join(repo, "packages"))
  .map((name) => join(repo, "packages", name, "package.json"))
  .filter((path) => existsSync(path))
  .map(read)
  .filter((manifest) => manifest.private !== true);

/** Libraries an application imports itself and hands to AGBoss, or gets back from it. */
const SHARED = [
  "zod",
  "@langchain/core",
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint",
  "@langchain/openai",
  "hono",
];

describe("the published packages", () => {
  test("are found", () => {
    expect(published.map((m) => m.name)).toContain("@agboss/core");
  });

  test("each declare the workspace's Node versions", () => {
    expect(root.engines?.node).toBe("^22.22.2 || ^24.15.0 || >=26.0.0");
    const differing = published.filter((m) => m.engines?.node !== root.engines?.node).map((m) => m.name);
    expect(differing).toEqual([]);
  });

  test("take shared libraries as peers with a range, and pin them only for their own builds", () => {
    const problems: string[] = [];
    for (const manifest of published) {
      for (const name of SHARED) {
        if (manifest.dependencies?.[name] !== undefined) problems.push(`${manifest.name} depends on ${name}`);
        const peer = manifest.peerDependencies?.[name];
        if (peer === undefined) continue;
        if (!/^\^\d+\.\d+\.\d+$/.test(peer)) problems.push(`${manifest.name} peers on ${name} ${peer}`);
        if (manifest.devDependencies?.[name] === undefined)
          problems.push(`${manifest.name} peers on ${name} but does not build against it`);
      }
    }
    expect(problems).toEqual([]);
    expect(Object.keys(published.find((m) => m.name === "@agboss/core")?.peerDependencies ?? {})).toEqual(
      expect.arrayContaining(["zod", "@langchain/core", "@langchain/langgraph"]),
    );
  });
});
