import { relative } from "node:path";
import { parseArgs } from "node:util";
import { CliError } from "./cli-error.js";
import { DEFAULT_TYPES_OUT, generateTypes } from "./generate-types.js";

/** Where the command writes; a test passes its own. */
export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

const USAGE = `Usage: agboss types <entry module> [--export <ApplicationClassName>] [--out ${DEFAULT_TYPES_OUT}] [--tsconfig <path>]

  Loads the module that exports your @Application (TypeScript through tsx, or built JavaScript),
  walks its components and writes declarations that give InputOf / OutputOf / ChannelAsk their
  exact types. Include the output file in your tsconfig.json.`;

/**
 * Runs `agboss <command> …` and returns the exit code: 0 when it wrote the file, 1 on a problem
 * (reported in one message), 2 on a usage error.
 */
export async function runCli(
  argv: readonly string[],
  output: CliOutput = { out: (line) => console.log(line), err: (line) => console.error(line) },
): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    output.err(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help === true) {
    output.out(USAGE);
    return 0;
  }
  const [command, entry, ...rest] = parsed.positionals;
  if (command !== "types" || entry === undefined || rest.length > 0) {
    output.err(USAGE);
    return 2;
  }
  try {
    const result = await generateTypes({
      entry,
      ...(parsed.values.export === undefined ? {} : { exportName: parsed.values.export }),
      ...(parsed.values.out === undefined ? {} : { out: parsed.values.out }),
      ...(parsed.values.tsconfig === undefined ? {} : { tsconfig: parsed.values.tsconfig }),
    });
    const {
      "workflow-start": starts,
      tool,
      "channel-role": roles,
      "reply-interpreter": interpreters,
    } = result.counts;
    output.out(
      `Wrote ${relative(process.cwd(), result.path)} for ${result.application}: ${starts} workflow start(s), ${tool} tool(s), ${roles} channel role(s), ${interpreters} reply interpreter(s).`,
    );
    return 0;
  } catch (error) {
    if (error instanceof CliError) {
      output.err(`agboss types: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      export: { type: "string" },
      out: { type: "string" },
      tsconfig: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}
