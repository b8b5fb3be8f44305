import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";

/**
 * The docs' code is compiled by scripts/check-snippets.mjs (a CI step of its own). These tests run it
 * on small pages of their own: a broken block is reported at its Markdown line, and each convention
 * (continuing the block above, stated assumptions, named modules) lets exactly what it says through.
 */

const rootDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const pagesDir = mkdtempSync(join(tmpdir(), "agboss-snippets-"));
afterAll(() => rmSync(pagesDir, { recursive: true, force: true }));

const fence = "```";

function page(name: string, ...blocks: string[]): string {
  const path = join(pagesDir, name);
  writeFileSync(
    path,
    `# ${name}\n\n${blocks.map((b) => `Some prose.\n\n${fence}ts\n${b}\n${fence}\n`).join("\n")}`,
  );
  return path;
}

function check(...pages: string[]): { status: number | null; output: string } {
  const out = join(rootDir, "tests", "snippets", `.generated-test-${process.pid}`);
  const run = spawnSync(
    process.execPath,
    [join(rootDir, "scripts", "check-snippets.mjs"), "--out", out, ...pages],
    {
      cwd: rootDir,
      encoding: "utf8",
    },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

const tool = `import { Dto, Tool, type ToolHandler } from "@agboss/core";
import { z } from "zod";

export class OrderDto extends Dto({ orderId: z.string() }) {}

@Tool({ name: "lookup-order-tool", description: "Looks an order up", input: OrderDto, output: OrderDto })
export class LookupOrderTool implements ToolHandler<OrderDto, OrderDto> {
  run(input: OrderDto): OrderDto {
    return input;
  }
}`;

describe("the docs' ts blocks", () => {
  test("blocks that use the conventions compile, and the checker says how many", () => {
    const good = page(
      "good.md",
      tool,
      `// continues from above
import { callTool, type Dto } from "@agboss/core";

callTool(LookupOrderTool, { orderId: "ord_1" } satisfies OrderDto);`,
      `// assumes: const app: App, pauseId: string
// assumes: classes ReviewStart, ReviewFinish, LegalAgent
import { type App, start } from "@agboss/core";

start(ReviewStart).toParallel([LegalAgent]).toFinish(ReviewFinish);
await app.resume({ pauseId, decision: { approved: true } }, { ownerId: "dana" });`,
      `// orders.ts
export const ORDER_PREFIX = "ord_";`,
      `import { ORDER_PREFIX } from "./orders.js";

export const first: string = \`\${ORDER_PREFIX}1\`;`,
    );
    const result = check(good);
    expect(result.output).toContain("5 ts blocks in 1 pages compile.");
    expect(result.status).toBe(0);
  });

  test("a broken block fails the check, reported at the page's line; each convention is needed", () => {
    const broken = page(
      "broken.md",
      // 1: a type error in the page's own code (line 6 of the page)
      `const count: number = "three";`,
      // 2: the tool of block 3 without "continues from above"
      tool,
      `callTool(LookupOrderTool, { orderId: "ord_1" });`,
      // 4: an app it neither declares nor assumes
      `await app.close();`,
      // 5: a module no block of the page is named after
      `import { ORDER_PREFIX } from "./orders.js";`,
      // 6: a value of the wrong type passed to the API
      `import { hours } from "@agboss/core";

hours("two");`,
    );
    const result = check(broken);
    expect(result.status).toBe(1);
    const at = (line: number, code: string) => new RegExp(`broken\\.md:${line}:\\d+ ${code}`);
    expect(result.output).toMatch(at(6, "TS2322"));
    expect(result.output).toMatch(at(28, "TS2304")); // callTool
    expect(result.output).toMatch(at(34, "TS2304")); // app
    expect(result.output).toMatch(at(40, "TS2307")); // ./orders.js
    expect(result.output).toMatch(at(48, "TS2345")); // hours("two")
    expect(result.output).toContain("problem(s) in the ts blocks of 1 page(s)");
  });

  test("continuing from above on a page's first block is refused", () => {
    const result = check(page("first.md", "// continues from above\nexport const a = 1;"));
    expect(result.status).toBe(1);
    expect(result.output).toContain('"// continues from above" on the page\'s first ts block');
  });
});
