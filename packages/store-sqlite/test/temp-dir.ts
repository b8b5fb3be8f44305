import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A temporary directory removed on `dispose()`. */
export function tempDir(prefix = "agboss-sqlite-"): {
  path: string;
  file(name: string): string;
  dispose(): void;
} {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    file: (name) => join(path, name),
    dispose: () => rmSync(path, { recursive: true, force: true }),
  };
}
