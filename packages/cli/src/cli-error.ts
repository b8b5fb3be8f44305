/** A problem the command reports in one message and exit code 1, without a stack trace. */
export class CliError extends Error {
  override readonly name = "CliError";
}
