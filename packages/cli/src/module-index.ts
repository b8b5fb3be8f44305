import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { AnyClass } from "@agboss/core";
import type { LoadedApplication } from "./load-application.js";

/** Where the generated file imports a class from, and under which name. */
export interface ClassHome {
  /** A relative path from the generated file (`../src/refund.js`) or a package name. */
  readonly specifier: string;
  readonly exportName: string;
}

interface Candidate extends ClassHome {
  /** 0: a module of the application's package that declares the class; 1: a package's entry; 2: a re-export. */
  readonly rank: 0 | 1 | 2;
}

/**
 * Finds, for each exported class, the module to name it by. The application's own modules (those
 * of the entry's package) are named by a relative path from the output file, `.ts` written as
 * `.js`; a class from another package by that package's name, when its entry exports it. A class
 * exported by several modules is named by the one whose source declares it (`class Name`), since
 * a declaration merges only where the class is declared.
 */
export async function indexModules(
  loaded: LoadedApplication,
  entryPath: string,
  outPath: string,
): Promise<Map<AnyClass, ClassHome>> {
  const entryRoot = packageRoot(entryPath);
  const outDir = dirname(outPath);
  const best = new Map<AnyClass, Candidate>();
  const offer = (value: unknown, candidate: Candidate) => {
    if (typeof value !== "function") return;
    const current = best.get(value as AnyClass);
    if (current === undefined || candidate.rank < current.rank) best.set(value as AnyClass, candidate);
  };
  const packages = new Set<string>();
  for (const module of loaded.modules) {
    const file = fileURLToPath(module.url);
    const root = packageRoot(file);
    if (root === entryRoot && !file.includes(`${sep}node_modules${sep}`)) {
      const source = readSource(file);
      const specifier = moduleSpecifier(outDir, file);
      for (const [exportName, value] of Object.entries(module.exports)) {
        if (typeof value !== "function") continue;
        const declares = new RegExp(`\\bclass\\s+${escapeRegExp(value.name)}\\b`).test(source);
        offer(value, { specifier, exportName, rank: declares ? 0 : 2 });
      }
    } else {
      const name = root === undefined ? undefined : packageName(root);
      if (name !== undefined) packages.add(name);
    }
  }
  for (const name of packages) {
    let exports: Readonly<Record<string, unknown>>;
    try {
      exports = await loaded.importFrom(name);
    } catch {
      continue; // a package with no root entry the application can import: its classes stay unnamed
    }
    for (const [exportName, value] of Object.entries(exports))
      offer(value, { specifier: name, exportName, rank: 1 });
  }
  return new Map([...best].map(([cls, { specifier, exportName }]) => [cls, { specifier, exportName }]));
}

/** The path from the output directory to a module, as an import specifier (`.ts` → `.js`). */
export function moduleSpecifier(outDir: string, file: string): string {
  const path = relative(outDir, file).split(sep).join("/");
  const js = path.replace(/\.(m|c)?tsx?$/, (_, kind: string | undefined) => `.${kind ?? ""}js`);
  return js.startsWith(".") ? js : `./${js}`;
}

const roots = new Map<string, string | undefined>();

/** The nearest directory at or above `file` with a package.json. */
function packageRoot(file: string): string | undefined {
  let dir = dirname(file);
  const seen: string[] = [];
  for (;;) {
    const known = roots.get(dir);
    if (known !== undefined || roots.has(dir)) return remember(seen, known);
    seen.push(dir);
    if (existsSync(join(dir, "package.json"))) return remember(seen, dir);
    const parent = dirname(dir);
    if (parent === dir) return remember(seen, undefined);
    dir = parent;
  }
}

function remember(dirs: readonly string[], root: string | undefined): string | undefined {
  for (const dir of dirs) roots.set(dir, root);
  return root;
}

function packageName(root: string): string | undefined {
  try {
    const name = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name?: unknown }).name;
    return typeof name === "string" ? name : undefined;
  } catch {
    return undefined;
  }
}

function readSource(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
