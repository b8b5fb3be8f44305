/**
 * `text` with the ids a run generates (UUIDs, and long hex runs such as trace and span ids) replaced by
 * `<id>`: a test that looks for a sensitive value in it cannot find it by chance inside a random id. Runs
 * of digits alone are kept, so a leaked number is still there to find.
 */
export function withoutIds(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<id>")
    .replace(/\b(?=[0-9a-f]*[a-f])[0-9a-f]{16,}\b/gi, "<id>");
}
