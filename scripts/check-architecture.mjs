#!/usr/bin/env node
// Checks the shape of @agboss/core's source: no import cycles between files, and no import that points
// up the layer order listed in docs/architecture.md. Reads `import … from "./…"` and `export … from`
// statements as text (type-only imports included: a layer's types belong to it too).
//   node scripts/check-architecture.mjs            exits 1 and lists every violation
//   node scripts/check-architecture.mjs --graph    also prints the folder graph
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "packages/core/src");

/**
 * The layers of @agboss/core, lowest first. A file may import from its own folder and from folders of
 * lower layers; folders in one layer may import each other (but no file cycles). Keep in step with
 * docs/architecture.md.
 */
export const LAYERS = [
  ["errors", "time", "logging"],
  ["dto", "container"],
  ["models", "flow", "pii", "budgets"],
  ["channels", "interpreters", "pauses", "records", "store"],
  ["components"],
  ["assembly"],
  ["services"],
  ["answering"],
  ["graph"],
  ["execution"],
  ["app"],
];
/** Files at the top of src/ (the entry points) may import anything. */
const ENTRY = "(entry)";

function files(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)"/g;

function importsOf(file) {
  const text = readFileSync(file, "utf8");
  const found = [];
  for (const match of text.matchAll(IMPORT)) {
    const target = resolve(dirname(file), match[1].replace(/\.js$/, ".ts"));
    found.push(target);
  }
  return found;
}

function folderOf(file) {
  const rel = relative(src, file).split("/");
  return rel.length === 1 ? ENTRY : rel[0];
}

const layerOf = new Map();
LAYERS.forEach((folders, index) => {
  for (const folder of folders) layerOf.set(folder, index);
});

const all = files(src);
const graph = new Map(all.map((f) => [f, importsOf(f).filter((t) => all.includes(t))]));
const problems = [];

for (const folder of new Set(all.map(folderOf))) {
  if (folder !== ENTRY && !layerOf.has(folder)) {
    problems.push(
      `folder ${folder}/ is in no layer: add it to LAYERS (scripts/check-architecture.mjs) and docs/architecture.md`,
    );
  }
}

// Imports against the layer order.
for (const [file, targets] of graph) {
  const from = folderOf(file);
  if (from === ENTRY) continue;
  for (const target of targets) {
    const to = folderOf(target);
    if (to === ENTRY) {
      problems.push(`${relative(src, file)} imports the entry point ${relative(src, target)}`);
      continue;
    }
    if (from === to) continue;
    if ((layerOf.get(to) ?? -1) > (layerOf.get(from) ?? -1)) {
      problems.push(
        `${relative(src, file)} (${from}/) imports ${relative(src, target)} from a higher layer (${to}/)`,
      );
    }
  }
}

// File cycles (Tarjan's strongly connected components).
let index = 0;
const stack = [];
const state = new Map();
const cycles = [];
function visit(node) {
  state.set(node, { index, low: index, onStack: true });
  index += 1;
  stack.push(node);
  for (const next of graph.get(node) ?? []) {
    if (!state.has(next)) {
      visit(next);
      state.get(node).low = Math.min(state.get(node).low, state.get(next).low);
    } else if (state.get(next).onStack) {
      state.get(node).low = Math.min(state.get(node).low, state.get(next).index);
    }
  }
  if (state.get(node).low === state.get(node).index) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      state.get(member).onStack = false;
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component);
  }
}
for (const node of graph.keys()) if (!state.has(node)) visit(node);
for (const cycle of cycles) {
  problems.push(`import cycle: ${cycle.map((f) => relative(src, f)).join(" <-> ")}`);
}

if (process.argv.includes("--graph")) {
  const edges = new Map();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const a = folderOf(file);
      const b = folderOf(target);
      if (a !== b) edges.set(`${a} -> ${b}`, (edges.get(`${a} -> ${b}`) ?? 0) + 1);
    }
  }
  for (const [edge, count] of [...edges].sort()) console.log(`${edge} (${count})`);
}

if (problems.length > 0) {
  for (const problem of problems) console.error(`architecture: ${problem}`);
  console.error(`architecture: ${problems.length} problem(s) in packages/core/src`);
  process.exit(1);
}
console.log(
  `architecture: ${all.length} files, ${LAYERS.length} layers, no cycles, every import points down`,
);
