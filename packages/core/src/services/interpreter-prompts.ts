import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { AssembledApplication } from "../assembly/assembled-application.js";
import { type AnyClass, componentOf } from "../container/component-registry.js";
import { InterpreterPromptError } from "../errors/app-errors.js";
import type { ReplyInterpreterOptions } from "../interpreters/reply-interpreter.js";

/**
 * Reads every reply interpreter's `promptUrls` once, when the application starts: a path (relative to
 * the working directory), a `file:` URL, or an `http(s):` URL. Returns each interpreter's whole
 * instructions (its `prompt`, then each document in order). An interpreter that cannot be given its
 * instructions does not start half-instructed: `createApp` fails with `InterpreterPromptError`.
 * @internal
 */
export async function loadInterpreterPrompts(
  assembled: AssembledApplication,
): Promise<ReadonlyMap<AnyClass, string>> {
  const interpreters = new Set<AnyClass>();
  for (const agent of assembled.agents.values()) {
    for (const tool of agent.tools.values()) {
      if (tool.channel?.replyInterpreter !== undefined) interpreters.add(tool.channel.replyInterpreter);
    }
  }
  const prompts = new Map<AnyClass, string>();
  for (const interpreter of interpreters) {
    const options = componentOf<ReplyInterpreterOptions>(interpreter)?.options;
    const urls = options?.promptUrls ?? [];
    if (options === undefined || urls.length === 0) continue;
    const documents: string[] = [];
    for (const url of urls) documents.push(await readPromptDocument(options.name, url));
    prompts.set(
      interpreter,
      [options.prompt, ...documents].filter((p) => p !== undefined && p !== "").join("\n\n"),
    );
  }
  return prompts;
}

/** Reads one prompt document of an interpreter (a path, a `file:` or an `http(s):` URL). @internal */
export async function readPromptDocument(interpreter: string, url: string): Promise<string> {
  try {
    if (/^https?:\/\//i.test(url)) {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
      return (await response.text()).trim();
    }
    const path = url.startsWith("file:") ? fileURLToPath(url) : resolve(url);
    return (await readFile(path, "utf8")).trim();
  } catch (error) {
    throw new InterpreterPromptError(interpreter, url, error);
  }
}
