/** Reads a bigint column, whichever type the driver returned it as. @internal */
export function toNumber(value: number | string | bigint): number {
  return typeof value === "number" ? value : Number(value);
}

/** Reads a bigint column of epoch milliseconds. @internal */
export const toMillis = toNumber;

/** Reads a nullable bigint column. @internal */
export function toOptionalMillis(value: number | string | bigint | null): number | undefined {
  return value === null ? undefined : toMillis(value);
}

/** Writes a JSON column; `undefined` becomes SQL null. @internal */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** Reads a JSON column. @internal */
export function fromJsonText(text: string): unknown {
  return JSON.parse(text);
}

/** Turns bytes from the serializer into a value both better-sqlite3 and pg bind as a blob. @internal */
export function toBlob(bytes: Uint8Array | string): Uint8Array {
  if (typeof bytes === "string") return Buffer.from(bytes, "utf8");
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
