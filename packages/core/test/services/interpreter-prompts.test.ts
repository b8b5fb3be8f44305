import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { InterpreterPromptError } from "../../src/errors/app-errors.js";
import { readPromptDocument } from "../../src/services/interpreter-prompts.js";

describe("reply interpreters' prompt documents", () => {
  const dir = mkdtempSync(join(tmpdir(), "agboss-prompts-"));
  const file = join(dir, "policy.md");
  writeFileSync(file, "\nRefunds over 500 EUR need a second approver.\n");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("a path relative to the working directory and a file: URL are read, trimmed", async () => {
    expect(await readPromptDocument("i", relative(process.cwd(), file))).toBe(
      "Refunds over 500 EUR need a second approver.",
    );
    expect(await readPromptDocument("i", pathToFileURL(file).href)).toBe(
      "Refunds over 500 EUR need a second approver.",
    );
  });

  test("a document that is not there is an InterpreterPromptError naming the interpreter and the URL", async () => {
    const error = await readPromptDocument("refund-reply-interpreter", join(dir, "missing.md")).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InterpreterPromptError);
    expect(error).toMatchObject({
      code: "interpreter.prompt-unreadable",
      interpreter: "refund-reply-interpreter",
    });
    expect((error as Error).message).toContain("missing.md");
  });
});
