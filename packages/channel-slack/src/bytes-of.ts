/** A body as bytes, without copying bytes it already has. @internal */
export function bytesOf(body: string | Uint8Array): Buffer {
  return typeof body === "string"
    ? Buffer.from(body, "utf8")
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}
