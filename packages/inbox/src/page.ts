import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { InboxErrorCode, inboxError } from "./inbox-errors.js";

/** A built file of the page, with its ETag. */
interface Asset {
  readonly body: Uint8Array;
  readonly type: string;
  readonly etag: string;
}

/** The page's built files: `dist/client/`, made by the package's build from `client/`. */
const CLIENT_DIR = new URL("../dist/client/", import.meta.url);

const ASSETS: Readonly<Record<string, string>> = {
  "inbox.js": "text/javascript; charset=utf-8",
  "inbox.css": "text/css; charset=utf-8",
};

const loaded = new Map<string, Promise<Asset>>();

/** @internal One of the page's files, read once; undefined for a name that is none of them. */
export function asset(name: string): Promise<Asset> | undefined {
  const type = ASSETS[name];
  if (type === undefined) return undefined;
  let found = loaded.get(name);
  if (found === undefined) {
    found = readFile(new URL(name, CLIENT_DIR)).then(
      (body) => ({
        body,
        type,
        etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
      }),
      (error: unknown) => {
        loaded.delete(name);
        throw inboxError(
          500,
          InboxErrorCode.AssetsMissing,
          `The inbox page's ${name} is missing from ${CLIENT_DIR.pathname}: build @agboss/inbox (pnpm --filter @agboss/inbox build).`,
          error,
        );
      },
    );
    loaded.set(name, found);
  }
  return found;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * @internal The page's HTML: a shell that loads the script and the style sheet from beside it. `base`
 * is the path the page is served at, ending in `/`, so the page works wherever it is mounted.
 */
export function pageHtml(args: { readonly title: string; readonly base: string }): string {
  const title = escapeHtml(args.title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<base href="${escapeHtml(args.base)}">
<link rel="stylesheet" href="assets/inbox.css">
<script type="module" src="assets/inbox.js"></script>
</head>
<body>
<div id="inbox" data-title="${title}"><noscript>The inbox needs JavaScript.</noscript></div>
</body>
</html>
`;
}

/** @internal The page's headers: nothing from elsewhere runs, nothing frames it. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'self'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};
