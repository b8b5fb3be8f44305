#!/usr/bin/env node
// Compiles every ```ts block of README.md, docs/*.md and the packages' and examples' READMEs against
// the workspace packages' types.
//
// Each block becomes a module of its own under tests/snippets/.generated/ and `tsc` checks them all
// with the repository's compiler options (packages resolve to their sources through the
// `@agboss/source` condition, so nothing has to be built first). Two comments inside a block say
// what it needs, and are the only way a block may lean on code it does not show:
//
//   // continues from above        the block is checked after the page's previous ```ts block (and
//                                  whatever that one continues); their imports are merged
//   // assumes: const app: App;    a declaration put before the block's code, verbatim (`declare` is
//                                  added); it may use the block's imports
//   // assumes: classes A, B       components declared elsewhere: each becomes `declare class A {}`
//   // refunds.ts                  (the block's first line) the module's file name, so that other
//                                  blocks of the page import it as "./refunds.js"
//
// Errors are reported at the Markdown line they come from. Exit code 1 when any block fails.
//
// Usage: node scripts/check-snippets.mjs [--keep] [--out <dir>] [files...]
//   files   Markdown files to check instead of all of them
//   --keep  leave the generated modules (and their tsconfig.json) in place for a look
//   --out   where to generate them, a folder under tests/snippets/; default tests/snippets/.generated/<pid>

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const projectDir = join(root, "tests", "snippets");

const FILE_NAME = /^\/\/\s*([\w./-]+\.ts)\s*$/;
const CONTINUES = /^\s*\/\/\s*continues from above\b.*$/;
const ASSUMES = /^\s*\/\/\s*assumes:\s*(.+?)\s*$/;
const FENCE_OPEN = /^(\s*)```(ts|typescript)\s*$/;
const FENCE_CLOSE = /^\s*```\s*$/;

const args = process.argv.slice(2);
const keep = args.includes("--keep");
const outAt = args.indexOf("--out");
// A folder per run by default, so that two checks at once (a test and CI, say) never share one.
const outDir =
  outAt >= 0 && args[outAt + 1] !== undefined
    ? resolve(args[outAt + 1])
    : join(projectDir, ".generated", String(process.pid));
if (relative(projectDir, outDir).startsWith("..") || relative(projectDir, outDir) === "") {
  console.error(
    `--out must be a folder under ${relative(root, projectDir)}/ (the packages resolve from there)`,
  );
  process.exit(2);
}
const requested = args.filter((a, i) => !a.startsWith("--") && !(outAt >= 0 && i === outAt + 1));
const pages =
  requested.length > 0
    ? requested.map((f) => resolve(f))
    : [
        join(root, "README.md"),
        ...markdownIn("docs"),
        ...readmesUnder("packages"),
        ...readmesUnder("examples"),
      ];

function markdownIn(dir) {
  return readdirSync(join(root, dir))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => join(root, dir, f));
}

/** The README.md of each package (or example) folder under `dir`: what npm shows. */
function readmesUnder(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, dir, e.name, "README.md")))
    .map((e) => join(root, dir, e.name, "README.md"))
    .sort();
}

/** One ```ts block: its lines with their Markdown line numbers, and what it declares it needs. */
function blocksOf(page) {
  const lines = readFileSync(page, "utf8").split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_OPEN.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !FENCE_CLOSE.test(lines[j]); j++) {
      body.push({
        text: lines[j].slice(Math.min(indent, lines[j].length - lines[j].trimStart().length)),
        line: j + 1,
      });
    }
    const named = body.length > 0 ? FILE_NAME.exec(body[0].text) : null;
    const block = { start: i + 1, file: named?.[1], continues: false, assumes: [], imports: [], code: [] };
    splitBlock(block, body);
    blocks.push(block);
    i = j;
  }
  return blocks;
}

/** Sorts a block's lines into directives, import statements and the rest. */
function splitBlock(block, body) {
  for (let k = 0; k < body.length; k++) {
    const { text, line } = body[k];
    if (CONTINUES.test(text)) {
      block.continues = true;
      continue;
    }
    const assumed = ASSUMES.exec(text);
    if (assumed) {
      const decl = assumed[1];
      const names = /^classes?\s+([A-Za-z_$][\w$]*(?:\s*,\s*[A-Za-z_$][\w$]*)*)\s*(?:\/\/.*)?$/.exec(decl);
      if (names) {
        // `classes A, B`: components declared elsewhere (on another page, or left to the reader)
        for (const name of names[1].split(","))
          block.assumes.push({ text: `declare class ${name.trim()} {}`, line });
        continue;
      }
      const text2 = /^(const|let|function|class|abstract class|enum|namespace)\b/.test(decl)
        ? `declare ${decl}`
        : decl;
      block.assumes.push({ text: /[;}]$/.test(text2) || text2.includes("//") ? text2 : `${text2};`, line });
      continue;
    }
    if (/^import\s/.test(text)) {
      // An import statement, possibly over several lines, up to its `from "…";` or bare `"…";`.
      let statement = text;
      const first = line;
      while (!/["'];?\s*$/.test(statement) && k + 1 < body.length) {
        k++;
        statement += `\n${body[k].text}`;
      }
      block.imports.push({ text: statement, line: first });
      continue;
    }
    block.code.push({ text, line });
  }
}

/** Merges import statements: named imports of one module become one statement. */
function mergeImports(imports) {
  const named = new Map(); // module -> { names: Map(local -> spec), line }
  const other = new Map(); // verbatim statement -> line
  for (const { text, line } of imports) {
    const flat = text.replace(/\s+/g, " ").trim();
    const m = /^import (type )?\{([^}]*)\} from (["'][^"']+["']);?$/.exec(flat);
    if (!m) {
      if (!other.has(flat)) other.set(flat, line);
      continue;
    }
    const [, typeOnly, list, from] = m;
    const entry = named.get(from) ?? { names: new Map(), line };
    named.set(from, entry);
    for (const raw of list.split(",")) {
      const spec = raw.trim();
      if (spec === "") continue;
      const isType = typeOnly !== undefined || spec.startsWith("type ");
      const bare = spec.replace(/^type /, "");
      const local = bare.split(/ as /).pop().trim();
      const previous = entry.names.get(local);
      // A name imported once as a value and once as a type is a value import.
      entry.names.set(local, { bare, isType: isType && (previous === undefined || previous.isType) });
    }
  }
  const out = [];
  for (const [from, { names, line }] of named) {
    const specs = [...names.values()].map(({ bare, isType }) => (isType ? `type ${bare}` : bare));
    out.push({ text: `import { ${specs.join(", ")} } from ${from};`, line });
  }
  for (const [text, line] of other) out.push({ text, line });
  return out;
}

/** The module text for a chain of blocks, with the Markdown line of each generated line. */
function moduleOf(pageRel, chain) {
  const lines = [];
  const map = [];
  const push = (text, line) => {
    for (const part of text.split("\n")) {
      lines.push(part);
      map.push(line);
    }
  };
  push(
    `// ${pageRel}, the block at line ${chain[chain.length - 1].start}: generated by scripts/check-snippets.mjs`,
    null,
  );
  for (const imp of mergeImports(chain.flatMap((b) => b.imports))) push(imp.text, imp.line);
  const seen = new Set();
  for (const assumed of chain.flatMap((b) => b.assumes)) {
    if (seen.has(assumed.text)) continue;
    seen.add(assumed.text);
    push(assumed.text, assumed.line);
  }
  for (const block of chain) for (const { text, line } of block.code) push(text, line);
  push("export {};", null);
  return { text: `${lines.join("\n")}\n`, map };
}

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

const modules = new Map(); // generated path (relative to root) -> { page, map }
let blockCount = 0;
for (const page of pages) {
  const pageRel = relative(root, page);
  const slug = pageRel.replace(/\.md$/, "").replace(/[^A-Za-z0-9]+/g, "-");
  const blocks = blocksOf(page);
  blocks.forEach((block, index) => {
    blockCount++;
    let from = index;
    while (blocks[from].continues) {
      if (from === 0) {
        console.error(`${pageRel}:${block.start}: "// continues from above" on the page's first ts block`);
        process.exitCode = 1;
        break;
      }
      from--;
    }
    const { text, map } = moduleOf(pageRel, blocks.slice(from, index + 1));
    const file = join(
      outDir,
      slug,
      block.file ?? `block-${String(index + 1).padStart(2, "0")}-line-${block.start}.ts`,
    );
    if (relative(join(outDir, slug), file).startsWith("..")) {
      console.error(`${pageRel}:${block.start}: the file name ${block.file} leaves the page's folder`);
      process.exit(1);
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    modules.set(relative(root, file), { page: pageRel, map });
  });
}

// The compiler options are the repository's: strict, NodeNext, packages resolved to their sources.
writeFileSync(
  join(outDir, "tsconfig.json"),
  JSON.stringify({
    extends: relative(outDir, join(root, "tsconfig.base.json")),
    compilerOptions: { noEmit: true, types: ["node"] },
    include: ["**/*.ts", "*/.agboss/*.ts"],
  }),
);

const require = createRequire(join(projectDir, "package.json"));
const tsc = join(dirname(require.resolve("typescript/package.json")), "bin", "tsc");
const run = spawnSync(process.execPath, [tsc, "-p", join(outDir, "tsconfig.json"), "--pretty", "false"], {
  cwd: root,
  encoding: "utf8",
});
const output = `${run.stdout ?? ""}${run.stderr ?? ""}`;

const reported = new Set();
const problems = [];
let current;
for (const line of output.split("\n")) {
  const m = /^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$/.exec(line);
  if (m) {
    const [, file, l, col, , code, message] = m;
    const rel = relative(root, resolve(root, file));
    const mod = modules.get(rel);
    const mdLine = mod?.map[Number(l) - 1];
    const where = mod
      ? `${mod.page}:${mdLine ?? `(${basename(rel)} line ${l})`}:${col}`
      : `${rel}:${l}:${col}`;
    const key = `${where} ${code} ${message}`;
    current = reported.has(key) ? undefined : { key, text: `${where} ${code}: ${message}` };
    if (current) {
      reported.add(key);
      problems.push(current);
    }
  } else if (current && line.startsWith("  ")) {
    current.text += `\n${line}`;
  } else if (line.trim() !== "") {
    current = undefined;
    problems.push({ text: line });
  }
}

if (keep) console.log(`the generated modules are in ${relative(root, outDir)}`);
else rmSync(outDir, { recursive: true, force: true });

if (problems.length > 0 || run.status !== 0) {
  for (const p of problems) console.error(p.text);
  console.error(
    `\n${problems.length} problem(s) in the ts blocks of ${pages.length} page(s); see scripts/check-snippets.mjs for the conventions.`,
  );
  process.exit(1);
}
console.log(`${blockCount} ts blocks in ${pages.length} pages compile.`);
