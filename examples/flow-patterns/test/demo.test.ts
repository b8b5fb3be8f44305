import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const run = promisify(execFile);
const exampleDir = join(import.meta.dirname, "..");
let dataDir: string;
let lines: string[];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "agboss-demo-"));
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "--conditions=@agboss/source", "src/main.ts"],
    {
      cwd: exampleDir,
      env: { ...process.env, AGBOSS_SQLITE_PATH: join(dataDir, "refund-desk.sqlite") },
    },
  );
  lines = stdout.split("\n").map((l) => l.trim());
}, 60_000);

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/** The lines between a section's heading and the next blank line. */
function section(heading: string): string[] {
  const from = lines.findIndex((l) => l.startsWith(heading));
  expect(from, `no section "${heading}"`).toBeGreaterThanOrEqual(0);
  const to = lines.indexOf("", from);
  return lines.slice(from + 1, to === -1 ? undefined : to);
}

describe("the refund desk demo", () => {
  test("runs on the SQLite file it was given", () => {
    expect(lines[0]).toContain(join(dataDir, "refund-desk.sqlite"));
  });

  test("shows the request, each model turn and each tool call with its arguments masked", () => {
    const first = section("1. A customer asks for a refund");
    expect(first[0]).toBe(
      'request  customer-dana on thread order:ord_1042: "Please refund order ord_1042, the parcel never arrived."',
    );
    expect(first.filter((l) => l.startsWith("model"))).toEqual([
      "model    turn 1 (gpt-4o-mini) calls lookup-order-tool",
      "model    turn 2 (gpt-4o-mini) calls refund-card-tool",
      "model    turn 3 (gpt-4o-mini) answers",
    ]);
    expect(first).toContain(
      'tool     refund-card-tool {"orderId":"ord_1042","amountCents":12990,"customerEmail":"***"}',
    );
    expect(first).toContain('→ {"refundId":"rf_acme_ord_1042","status":"refunded"}');
    expect(first.join("\n")).not.toContain("dana@example.com");
    expect(first.find((l) => l.startsWith("output"))).toContain(
      "I refunded 129.90 EUR for ord_1042 (refund rf_acme_ord_1042)",
    );
    expect(first.find((l) => l.startsWith("status"))).toMatch(/^status +completed after 3 model calls/);
    expect(first.at(-1)).toBe("stored   thread order:ord_1042: completed");
  });

  test("a follow-up from a second createApp answers from the stored conversation", () => {
    const second = section("2. A follow-up on the same thread");
    expect(second[0]).toBe('request  customer-dana on thread order:ord_1042: "Did my refund go through?"');
    expect(second.find((l) => l.startsWith("output"))).toContain(
      "refund rf_acme_ord_1042 is refunded (I read it in the 7 earlier messages of this conversation)",
    );
    expect(second.find((l) => l.startsWith("status"))).toMatch(/^status +completed after 1 model call /);
    expect(second.at(-1)).toBe("stored   thread order:ord_1042: completed, completed");
  });
});
