#!/usr/bin/env node
// Sums vitest JSON reports in a folder and prints "N passed, N failed" (and skipped when any).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2] ?? ".vitest-results";
let passed = 0;
let failed = 0;
let skipped = 0;
let files = 0;
for (const name of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
  const report = JSON.parse(readFileSync(join(dir, name), "utf8"));
  files += 1;
  passed += report.numPassedTests ?? 0;
  failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  if (
    report.success === false &&
    (report.numFailedTests ?? 0) === 0 &&
    (report.numFailedTestSuites ?? 0) > 0
  ) {
    failed += report.numFailedTestSuites;
  }
}
if (files === 0) failed += 1;
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
