/** Request headers as node:http gives them (`req.headers`), as a plain record, or a fetch `Headers`. */
export type SlackRequestHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** One header, case-insensitively; the first value of a repeated one. @internal */
export function headerOf(headers: SlackRequestHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(record)) {
    if (key.toLowerCase() !== wanted) continue;
    return typeof value === "string" ? value : value?.[0];
  }
  return undefined;
}
