import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AnyClass, ComponentMeta } from "@agboss/core";
import { register } from "tsx/esm/api";
import { CliError } from "./cli-error.js";

/** Reads what a decorator recorded about a class (`componentOf` of the application's copy of core). */
export type ReadComponent = (target: unknown) => ComponentMeta | undefined;

/** A module the application loaded, with what it exports. */
export interface LoadedModule {
  /** Its `file:` URL. */
  readonly url: string;
  readonly exports: Readonly<Record<string, unknown>>;
}

/** The loaded application: its class, every module it loaded, and a way to read decorators. */
export interface LoadedApplication {
  readonly application: AnyClass;
  readonly entryUrl: string;
  readonly modules: readonly LoadedModule[];
  readonly componentOf: ReadComponent;
  /** Imports a module as the application would (same loader, same instances). */
  readonly importFrom: (specifier: string) => Promise<Readonly<Record<string, unknown>>>;
}

/**
 * Loads the entry module through tsx (so TypeScript sources run as they are; built JavaScript loads
 * as is) and records every module that loading it pulled in. tsx runs in its own namespace: the
 * modules are loaded once, and importing one of them again gives the same classes.
 */
export async function loadApplication(
  entry: string,
  exportName: string | undefined,
  tsconfig: string | undefined,
): Promise<LoadedApplication> {
  if (!existsSync(entry)) throw new CliError(`The entry module ${entry} does not exist.`);
  const urls = new Set<string>();
  const api = register({
    namespace: `agboss-types-${process.pid}`,
    onImport: (url) => urls.add(url),
    ...(tsconfig === undefined ? {} : { tsconfig: resolve(tsconfig) }),
  });
  const entryUrl = pathToFileURL(entry).href;
  const importFrom = (specifier: string) =>
    api.import(specifier, entryUrl) as Promise<Readonly<Record<string, unknown>>>;
  let entryExports: Readonly<Record<string, unknown>>;
  try {
    entryExports = await importFrom(entryUrl);
  } catch (error) {
    throw new CliError(`Loading ${entry} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  // tsx reports loads over a message port: let the last reports arrive.
  await new Promise((done) => setImmediate(done));
  urls.add(entryUrl);
  const componentOf = await readComponentFunction(importFrom);
  const application = pickApplication(entry, entryExports, exportName, componentOf);
  const modules: LoadedModule[] = [];
  for (const url of urls) {
    if (!url.startsWith("file:")) continue;
    modules.push({ url: stripQuery(url), exports: await importFrom(url) });
  }
  return { application, entryUrl, modules, componentOf, importFrom };
}

async function readComponentFunction(importFrom: LoadedApplication["importFrom"]): Promise<ReadComponent> {
  // The registry is one per process (a global symbol), so any copy of core reads the same one;
  // the application's own copy is the one sure to be loaded.
  let core: Readonly<Record<string, unknown>>;
  try {
    core = await importFrom("@agboss/core");
  } catch {
    core = (await import("@agboss/core")) as unknown as Readonly<Record<string, unknown>>;
  }
  const componentOf = core.componentOf;
  if (typeof componentOf !== "function")
    throw new CliError("The @agboss/core the application uses has no componentOf: is it an AGBoss release?");
  return componentOf as ReadComponent;
}

function pickApplication(
  entry: string,
  exports: Readonly<Record<string, unknown>>,
  exportName: string | undefined,
  componentOf: ReadComponent,
): AnyClass {
  const isApplication = (value: unknown) => componentOf(value)?.kind === "application";
  if (exportName !== undefined) {
    const value = exports[exportName];
    if (value === undefined) throw new CliError(`${entry} has no export named ${exportName}.`);
    if (!isApplication(value))
      throw new CliError(`${entry}'s export ${exportName} is not an @Application class.`);
    return value as AnyClass;
  }
  const found = Object.entries(exports).filter(([, value]) => isApplication(value));
  const [first] = found;
  if (first === undefined) throw new CliError(`${entry} exports no @Application class.`);
  if (found.length > 1)
    throw new CliError(
      `${entry} exports several @Application classes (${found.map(([name]) => name).join(", ")}): choose one with --export.`,
    );
  return first[1] as AnyClass;
}

function stripQuery(url: string): string {
  const parsed = new URL(url);
  parsed.search = "";
  parsed.hash = "";
  return parsed.href;
}
