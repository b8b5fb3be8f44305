import { mkdir, writeFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { typedComponents } from "./component-graph.js";
import { loadApplication } from "./load-application.js";
import { indexModules } from "./module-index.js";
import { renderDeclarations } from "./render-declarations.js";
import type { TypedKind, TypesOptions, TypesResult } from "./types-options.js";

/** The default output path, relative to the working directory. */
export const DEFAULT_TYPES_OUT = ".agboss/types.d.ts";

/**
 * Loads the application, walks its components and writes the declaration file that gives its
 * workflow starts, tools, channel roles and reply interpreters their exact types.
 *
 * @example
 * await generateTypes({ entry: "src/app.ts" }); // writes .agboss/types.d.ts
 */
export async function generateTypes(options: TypesOptions): Promise<TypesResult> {
  const cwd = options.cwd ?? process.cwd();
  const entry = resolve(cwd, options.entry);
  const out = resolve(cwd, options.out ?? DEFAULT_TYPES_OUT);
  const loaded = await loadApplication(
    entry,
    options.exportName,
    options.tsconfig === undefined ? undefined : resolve(cwd, options.tsconfig),
  );
  const components = typedComponents(loaded.application, loaded.componentOf);
  const homes = await indexModules(loaded, entry, out);
  const text = renderDeclarations(components, { command: commandLine(options, cwd, entry, out), homes });
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, text);
  const counts: Record<TypedKind, number> = {
    "workflow-start": 0,
    tool: 0,
    "channel-role": 0,
    "reply-interpreter": 0,
  };
  for (const component of components) counts[component.kind]++;
  return { path: out, text, application: loaded.application.name, counts };
}

function commandLine(options: TypesOptions, cwd: string, entry: string, out: string): string {
  const parts = ["agboss types", relative(cwd, entry)];
  if (options.exportName !== undefined) parts.push("--export", options.exportName);
  if (options.out !== undefined) parts.push("--out", relative(cwd, out));
  if (options.tsconfig !== undefined) parts.push("--tsconfig", options.tsconfig);
  return parts.join(" ");
}
