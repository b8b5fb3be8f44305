export { type CliOutput, runCli } from "./cli.js";
export { CliError } from "./cli-error.js";
export { DEFAULT_TYPES_OUT, generateTypes } from "./generate-types.js";
export type { TypedKind, TypesOptions, TypesResult } from "./types-options.js";
