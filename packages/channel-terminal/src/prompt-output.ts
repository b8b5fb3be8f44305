import { Writable } from "node:stream";

/**
 * A stream for one prompt that writes through to `target`. The prompt library pipes into its output
 * and ends it when the prompt is done; ending this one leaves `target` open for the next prompt.
 * @internal
 */
export function promptOutput(target: NodeJS.WritableStream): NodeJS.WritableStream {
  const through = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      target.write(chunk);
      done();
    },
  });
  // The prompt reads the terminal's size from its output.
  for (const key of ["columns", "rows", "isTTY"] as const) {
    Object.defineProperty(through, key, { get: () => (target as Partial<Record<typeof key, unknown>>)[key] });
  }
  return through;
}
