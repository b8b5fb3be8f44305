import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const testsDir = join(here, "..");
const rootDir = join(testsDir, "..");
const fixtureDir = join(testsDir, "src", "typed-fixture");

/** The `agboss` bin of @agboss/cli, run from its TypeScript source (dist/bin.js → src/bin.ts). */
async function cliBin(): Promise<string> {
  const manifest = createRequire(import.meta.url).resolve("@agboss/cli/package.json");
  const { bin } = JSON.parse(await readFile(manifest, "utf8")) as { bin: Record<string, string> };
  const built = bin.agboss;
  if (built === undefined) throw new Error("@agboss/cli has no agboss bin");
  return join(dirname(manifest), built.replace(/^\.\/dist\/(.+)\.js$/, "src/$1.ts"));
}

async function agboss(...args: string[]) {
  return run(process.execPath, ["--import", "tsx", "--conditions=@agboss/source", await cliBin(), ...args], {
    cwd: testsDir,
    timeout: 60_000,
  }).catch((error: { code?: number; stdout?: string; stderr?: string }) => ({
    code: error.code,
    stdout: error.stdout ?? "",
    stderr: error.stderr ?? "",
  }));
}

interface Diagnostic {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

/**
 * `tsc --noEmit` on a temp project; its diagnostics in our own files (the check file, the generated
 * declarations, the fixture). Core's sources are compiled too (the source condition), and may be
 * mid-edit elsewhere in the tree: their diagnostics do not bear on what is proved here.
 */
async function typecheck(dir: string, files: readonly string[]): Promise<Diagnostic[]> {
  const tsconfig = join(dir, "tsconfig.json");
  await writeFile(
    tsconfig,
    JSON.stringify({
      extends: relative(dir, join(rootDir, "tsconfig.base.json")).split(sep).join("/"),
      compilerOptions: { noEmit: true },
      files,
    }),
  );
  const tsc = join(rootDir, "node_modules", ".bin", "tsc");
  const output = await run(tsc, ["-p", tsconfig, "--noEmit", "--pretty", "false"], {
    cwd: testsDir,
    timeout: 120_000,
  }).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string }) => error.stdout ?? "",
  );
  return output
    .split("\n")
    .flatMap((line) => {
      const match = /^(.+?)\((\d+),\d+\): error (.*)$/.exec(line.trim());
      if (match === null) return [];
      const file = join(testsDir, match[1] as string);
      return [{ file, line: Number(match[2]), text: match[3] as string }];
    })
    .filter((d) => d.file.startsWith(dir) || d.file.startsWith(fixtureDir));
}

// The check file: what the generated declarations must make true. Lines marked "needs types" hold
// without generated types only if typing were absent — each is an error when the file is missing.
const CHECKS = `import type { App, ChannelAsk, InputOf, OutputOf, ReplyInterpreterInput, ToolCallApprovalDecisionDto, WorkflowFinishTextDto, WorkflowInput, WorkflowOutput, WorkflowStartTextDto } from "@agboss/core";
import type { RefundWorkflowStart } from "FIXTURE/app.js";
import type { OrderLookupInputDto, OrderLookupOutputDto, RefundCardInputDto, RefundCardOutputDto } from "FIXTURE/dtos.js";
import type { FinanceRoomRefundApprovalChannel, RefundApprovalChannel } from "FIXTURE/refund-approval.channel.js";
import type { RefundReplyInterpreter } from "FIXTURE/refund-reply.interpreter.js";
import type { OrderLookupTool, RefundCardTool } from "FIXTURE/tools.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

export type Exact = [
  Expect<Equal<InputOf<RefundReplyInterpreter>, ReplyInterpreterInput<RefundCardInputDto>>>, // needs types
  Expect<Equal<OutputOf<RefundReplyInterpreter>, ToolCallApprovalDecisionDto>>,
  Expect<Equal<ChannelAsk<RefundApprovalChannel>["value"]["arguments"], RefundCardInputDto>>, // needs types
  Expect<Equal<ChannelAsk<FinanceRoomRefundApprovalChannel>["value"]["arguments"], RefundCardInputDto>>, // needs types
  Expect<Equal<InputOf<RefundCardTool>, RefundCardInputDto>>,
  Expect<Equal<OutputOf<RefundCardTool>, RefundCardOutputDto>>,
  Expect<Equal<InputOf<OrderLookupTool>, OrderLookupInputDto>>,
  Expect<Equal<OutputOf<OrderLookupTool>, OrderLookupOutputDto>>, // needs types
  Expect<Equal<WorkflowInput<typeof RefundWorkflowStart>, WorkflowStartTextDto>>, // needs types
  Expect<Equal<WorkflowOutput<typeof RefundWorkflowStart>, WorkflowFinishTextDto>>, // needs types
];

// (a) correct usage compiles
export function halve(input: InputOf<RefundReplyInterpreter>, ask: ChannelAsk<RefundApprovalChannel>): number {
  const cents: number = input.ask.arguments.amountCents; // needs types
  const order: string = ask.value.arguments.orderId;
  return Math.floor(cents / 2) + order.length;
}
export const decision: OutputOf<RefundReplyInterpreter> = { approved: true, reason: "within budget" };
export const lookedUp: OutputOf<OrderLookupTool> = { status: "refunded" };

// (b) a wrong argument field and a wrong output are compile errors
export function wrongField(input: InputOf<RefundReplyInterpreter>, ask: ChannelAsk<RefundApprovalChannel>): unknown[] {
  return [
    // @ts-expect-error needs types: the approved DTO has no amountInCents
    ask.value.arguments.amountInCents,
    // @ts-expect-error needs types: the question's arguments are the approved DTO
    input.ask.arguments.amountInCents,
  ];
}
// app.execute: the start's input DTO in, the finish's output DTO out
export async function started(app: App, Start: typeof RefundWorkflowStart): Promise<string | undefined> {
  // @ts-expect-error needs types: the start's input DTO has text, not txt
  await app.execute(Start, { txt: "refund ord_1" }, { ownerId: "u1" });
  const result = await app.execute(Start, { text: "refund ord_1" }, { ownerId: "u1" });
  return result.output?.text; // needs types
}
// @ts-expect-error a decision's approved is a boolean
export const wrongDecision: OutputOf<RefundReplyInterpreter> = { approved: "yes" };
// @ts-expect-error needs types: the lookup tool's output DTO allows "paid" or "refunded" only
export const wrongOutput: OutputOf<OrderLookupTool> = { status: "lost" };
`;

describe("agboss types", () => {
  let dir: string;
  let generated: Awaited<ReturnType<typeof agboss>>;
  let declarations: string;

  beforeAll(async () => {
    // under node_modules: ignored by git, and @agboss/core resolves from there
    const cache = join(testsDir, "node_modules", ".cache");
    await mkdir(cache, { recursive: true });
    dir = await mkdtemp(join(cache, "agboss-types-"));
    const fixture = relative(dir, fixtureDir).split(sep).join("/");
    await writeFile(join(dir, "checks.ts"), CHECKS.replaceAll("FIXTURE", fixture));
    generated = await agboss(
      "types",
      "src/typed-fixture/app.ts",
      "--export",
      "TypedRefundApplication",
      "--out",
      relative(testsDir, join(dir, ".agboss", "types.d.ts")),
    );
    declarations = await readFile(join(dir, ".agboss", "types.d.ts"), "utf8").catch(() => "");
  }, 90_000);

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  test("[RP-12] the CLI writes module augmentations for the fixture's tools, role and reply interpreter", () => {
    expect(generated.stderr).toBe("");
    expect(generated.stdout).toContain(
      "1 workflow start(s), 2 tool(s), 1 channel role(s), 1 reply interpreter(s)",
    );
    const fixture = relative(join(dir, ".agboss"), fixtureDir).split(sep).join("/");
    expect(declarations).toContain(`declare module "${fixture}/refund-reply.interpreter.js" {`);
    expect(declarations).toContain(
      "readonly __agbossTypes?: { readonly input: ReplyInterpreterInput<RefundCardInputDto>; readonly output: ToolCallApprovalDecisionDto };",
    );
    // the DTO is re-exported by app.ts; the declarations name the module that declares it
    expect(declarations).toContain(`from "${fixture}/dtos.js";`);
    expect(declarations).not.toContain(`from "${fixture}/app.js";`);
    // the start is declared in app.ts: its input DTO and its finish's output DTO
    expect(declarations).toContain(`declare module "${fixture}/app.js" {`);
    expect(declarations).toContain(
      "readonly __agbossTypes?: { readonly input: WorkflowStartTextDto; readonly output: WorkflowFinishTextDto };",
    );
  });

  test("[RP-12] with the generated types, InputOf / OutputOf / ChannelAsk are exact: right usage compiles, a wrong argument field and a wrong output do not", async () => {
    const diagnostics = await typecheck(dir, ["checks.ts", ".agboss/types.d.ts"]);
    expect(diagnostics).toEqual([]);
  }, 120_000);

  test("[RP-12] without them, every line marked 'needs types' fails: the typing comes from the generated file", async () => {
    const needsTypes = CHECKS.split("\n").flatMap((line, i) => (line.includes("needs types") ? [i + 1] : []));
    const diagnostics = await typecheck(dir, ["checks.ts"]);
    const lines = diagnostics.filter((d) => d.file === join(dir, "checks.ts")).map((d) => d.line);
    expect(lines.sort((a, b) => a - b)).toEqual(needsTypes);
    expect(diagnostics.filter((d) => d.file !== join(dir, "checks.ts"))).toEqual([]);
  }, 120_000);

  test("[RP-12] a module without an @Application, or an unknown --export, is reported in one message", async () => {
    const [none, wrong] = await Promise.all([
      agboss("types", "src/typed-fixture/dtos.ts", "--out", "node_modules/.cache/unused.d.ts"),
      agboss("types", "src/typed-fixture/app.ts", "--export", "Nope"),
    ]);
    expect(none).toMatchObject({ code: 1, stderr: expect.stringContaining("exports no @Application class") });
    expect(wrong).toMatchObject({ code: 1, stderr: expect.stringContaining("has no export named Nope") });
  }, 90_000);
});
