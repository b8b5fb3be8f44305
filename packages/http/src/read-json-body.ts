import { HttpError, HttpErrorCode } from "./http-error.js";

/** The default limit on a body, in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

function tooLarge(limit: number): HttpError {
  return new HttpError({
    status: 413,
    code: HttpErrorCode.BodyTooLarge,
    message: `The body is larger than ${limit} bytes; send a smaller one.`,
    extensions: { maxBytes: limit },
  });
}

function unreadable(message: string, cause?: unknown): HttpError {
  return new HttpError({ status: 400, code: HttpErrorCode.BodyUnreadable, message, cause });
}

function isJsonType(contentType: string): boolean {
  const type = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** The body's bytes, at most `limit` of them: a declared or streamed excess is 413 before it is all read. */
async function readBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    await request.body?.cancel().catch(() => undefined);
    throw tooLarge(limit);
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/**
 * Reads a JSON body as bytes, at most `limit` of them (413 beyond), decodes them as UTF-8 once, whole,
 * so a character split across network chunks arrives intact, and parses them. A body that is not
 * UTF-8 or not JSON is a 400; one declared as another media type a 415. For routes of your own beside
 * the handler's (the errors it throws are `HttpError`s that `problemResponse` answers).
 *
 * @example
 * const body = await readJsonBody(request, DEFAULT_MAX_BODY_BYTES);
 */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const contentType = request.headers.get("content-type");
  if (contentType !== null && !isJsonType(contentType)) {
    await request.body?.cancel().catch(() => undefined);
    throw new HttpError({
      status: 415,
      code: HttpErrorCode.UnsupportedMediaType,
      message: `The body is declared as "${contentType}"; send JSON (content-type: application/json).`,
    });
  }
  const bytes = await readBytes(request, limit);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    throw unreadable("The body is not valid UTF-8; send JSON encoded as UTF-8.", error);
  }
  if (text.trim() === "") throw unreadable("The body is empty; send a JSON object.");
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw unreadable(
      `The body is not JSON: ${error instanceof Error ? error.message : String(error)}.`,
      error,
    );
  }
}
