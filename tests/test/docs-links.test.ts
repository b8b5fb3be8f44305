import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

/**
 * Checks the links of the project's Markdown pages without a network: relative links must name a file
 * or folder that exists (with the exact case), `#anchors` must be produced by a heading of the target
 * page (GitHub's slug rules), http(s) links must be well-formed, and every docs page must be reachable
 * from README.md. Links inside fenced code blocks and inline code are not links.
 */

const rootDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

// ---------------------------------------------------------------------------------------------------
// Slugs

/** The text a heading renders to, before slugging: links keep their text, code keeps its content. */
function headingText(raw: string): string {
  return splitCode(raw)
    .map(({ code, text }) =>
      code
        ? text
        : text
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
            .replace(/<[^>]+>/g, "")
            .replace(/\*+/g, "")
            .replace(/(^|[^\p{L}\p{N}_])_+|_+(?=$|[^\p{L}\p{N}_])/gu, "$1"),
    )
    .join("")
    .trim();
}

/** GitHub's slug of one heading: lowercase, punctuation dropped but for hyphens, each space a hyphen. */
function githubSlug(heading: string): string {
  return headingText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** Slugs of a page's headings in order, duplicates numbered -1, -2 … as GitHub does. */
function githubSlugs(headings: readonly string[]): string[] {
  const occurrences = new Map<string, number>();
  return headings.map((heading) => {
    const original = githubSlug(heading);
    let slug = original;
    while (occurrences.has(slug)) {
      const next = (occurrences.get(original) ?? 0) + 1;
      occurrences.set(original, next);
      slug = `${original}-${next}`;
    }
    occurrences.set(slug, 0);
    return slug;
  });
}

// ---------------------------------------------------------------------------------------------------
// A small Markdown scan

interface ScannedLink {
  line: number;
  target: string;
  label: string;
  /** Set when the text looks like a link but does not parse as one. */
  malformed?: true;
}

interface ScannedPage {
  links: ScannedLink[];
  /** Heading texts in order (for slugs). */
  headings: string[];
  /** Anchors named explicitly with `<a name>` / `id`. */
  htmlAnchors: string[];
}

/** Splits text into code spans and the rest (CommonMark: a run of n backticks closes on the next run of n). */
function splitCode(text: string): { code: boolean; text: string }[] {
  const parts: { code: boolean; text: string }[] = [];
  let plainStart = 0;
  let i = 0;
  while (i < text.length) {
    if (text[i] === "\\" && text[i + 1] === "`") {
      i += 2;
      continue;
    }
    if (text[i] !== "`") {
      i++;
      continue;
    }
    let end = i;
    while (text[end] === "`") end++;
    const fence = text.slice(i, end);
    const close = new RegExp(`(?<!\`)${fence}(?!\`)`, "g");
    close.lastIndex = end;
    const found = close.exec(text);
    if (found === null) {
      i = end;
      continue;
    }
    if (i > plainStart) parts.push({ code: false, text: text.slice(plainStart, i) });
    parts.push({ code: true, text: text.slice(end, found.index).replace(/^ (.*) $/s, "$1") });
    i = found.index + fence.length;
    plainStart = i;
  }
  if (plainStart < text.length) parts.push({ code: false, text: text.slice(plainStart) });
  return parts;
}

/** The text with every code span blanked out (same length, newlines kept), so offsets still map to lines. */
function maskCode(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (text[i] === "\\" && text[i + 1] === "`") {
      out += "  ";
      i += 2;
      continue;
    }
    if (text[i] !== "`") {
      out += text[i];
      i++;
      continue;
    }
    let end = i;
    while (text[end] === "`") end++;
    const fence = text.slice(i, end);
    const close = new RegExp(`(?<!\`)${fence}(?!\`)`, "g");
    close.lastIndex = end;
    const found = close.exec(text);
    const stop = found === null ? end : found.index + fence.length;
    out += found === null ? fence : text.slice(i, stop).replace(/[^\n]/g, " ");
    i = stop;
  }
  return out;
}

// [label](destination "title") and ![alt](…); the label may hold one level of brackets.
const INLINE_LINK =
  /(!?)\[((?:[^[\]\\]|\\.|\[(?:[^[\]\\]|\\.)*\])*)\]\(\s*(<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?\s*\)/g;
const AUTOLINK = /<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^<>\n]*)>/g;
const REFERENCE_DEFINITION = /^ {0,3}\[((?:[^[\]\\]|\\.)+)\]:[ \t]*(<[^<>\n]*>|\S+)/;
const HTML_ANCHOR = /<a\s[^>]*?\b(?:name|id)\s*=\s*["']([^"']+)["']/gi;
const ATX_HEADING = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
const FENCE_OPEN = /^[ \t]*(`{3,}|~{3,})(.*)$/;

function scanMarkdown(source: string): ScannedPage {
  const lines = source.split(/\r?\n/);
  const page: ScannedPage = { links: [], headings: [], htmlAnchors: [] };
  let block: { firstLine: number; lines: string[] } | undefined;

  const scanText = (text: string, firstLine: number) => {
    const masked = maskCode(text);
    const lineAt = (offset: number) => firstLine + (masked.slice(0, offset).match(/\n/g)?.length ?? 0);
    const covered: [number, number][] = [];
    for (const match of masked.matchAll(INLINE_LINK)) {
      const start = match.index ?? 0;
      covered.push([start, start + match[0].length]);
      if (start > 0 && masked[start - 1] === "\\") continue;
      const destination = match[3] ?? "";
      const destinationAt = start + match[0].lastIndexOf(destination, match[0].length - 1);
      page.links.push({
        line: lineAt(destinationAt),
        target: destination.replace(/^<(.*)>$/, "$1").replace(/\\(.)/g, "$1"),
        label: `${match[1]}[${(match[2] ?? "").replace(/\s+/g, " ").trim()}]`,
      });
    }
    for (const match of masked.matchAll(/\]\(/g)) {
      const at = match.index ?? 0;
      if (covered.some(([from, to]) => at >= from && at < to)) continue;
      const rest = /^[^)\n]*\)?/.exec(masked.slice(at + 2))?.[0] ?? "";
      page.links.push({
        line: lineAt(at),
        target: rest.length > 60 ? `${rest.slice(0, 60)}…` : rest,
        label: "[…]",
        malformed: true,
      });
    }
    for (const match of masked.matchAll(AUTOLINK)) {
      if (/^[a-z]+$/i.test(match[1] ?? "")) continue;
      page.links.push({ line: lineAt(match.index ?? 0), target: match[1] ?? "", label: "<autolink>" });
    }
    for (const match of masked.matchAll(HTML_ANCHOR)) page.htmlAnchors.push(match[1] ?? "");
    masked.split("\n").forEach((line, index) => {
      const definition = REFERENCE_DEFINITION.exec(line);
      if (definition === null) return;
      page.links.push({
        line: firstLine + index,
        target: (definition[2] ?? "").replace(/^<(.*)>$/, "$1"),
        label: `[${definition[1]}]:`,
      });
    });
  };
  const endBlock = () => {
    if (block !== undefined) scanText(block.lines.join("\n"), block.firstLine);
    block = undefined;
  };

  let fence: { char: string; length: number } | undefined;
  lines.forEach((line, index) => {
    const lineNumber = index + 1;
    if (fence !== undefined) {
      const close = /^[ \t]*(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close?.[1]?.[0] === fence.char && close[1].length >= fence.length) fence = undefined;
      return;
    }
    const open = FENCE_OPEN.exec(line);
    if (open !== null && !(open[1]?.[0] === "`" && open[2]?.includes("`"))) {
      endBlock();
      fence = { char: open[1]?.[0] ?? "`", length: open[1]?.length ?? 3 };
      return;
    }
    if (line.trim() === "") {
      endBlock();
      return;
    }
    const heading = ATX_HEADING.exec(line);
    if (heading !== null) {
      endBlock();
      page.headings.push(heading[1] ?? "");
      scanText(line, lineNumber);
      return;
    }
    if (
      SETEXT_UNDERLINE.test(line) &&
      block !== undefined &&
      !/^ {0,3}(?:[-*+>|]|\d+[.)])/.test(block.lines[0] ?? "")
    ) {
      page.headings.push(block.lines.join(" "));
      endBlock();
      return;
    }
    if (block === undefined) block = { firstLine: lineNumber, lines: [] };
    block.lines.push(line);
  });
  endBlock();
  return page;
}

// ---------------------------------------------------------------------------------------------------
// The pages and their links

function markdownPages(): string[] {
  const pages = ["README.md", "bench/README.md"];
  const listDir = (dir: string) =>
    existsSync(join(rootDir, dir))
      ? readdirSync(join(rootDir, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))
      : [];
  for (const entry of listDir("docs")) {
    if (entry.isFile() && entry.name.endsWith(".md")) pages.push(`docs/${entry.name}`);
  }
  for (const parent of ["packages", "examples"]) {
    for (const entry of listDir(parent)) {
      if (entry.isDirectory() && existsSync(join(rootDir, parent, entry.name, "README.md"))) {
        pages.push(`${parent}/${entry.name}/README.md`);
      }
    }
  }
  return pages.filter((page) => existsSync(join(rootDir, page)));
}

const directoryEntries = new Map<string, Set<string>>();

/** Whether a repository path exists with exactly this case (GitHub is case-sensitive). */
function pathKind(repoPath: string): "file" | "dir" | undefined {
  if (repoPath === "") return "dir";
  let dir = "";
  for (const segment of repoPath.split("/")) {
    let entries = directoryEntries.get(dir);
    if (entries === undefined) {
      entries = new Set(readdirSync(join(rootDir, dir)));
      directoryEntries.set(dir, entries);
    }
    if (!entries.has(segment)) return undefined;
    dir = dir === "" ? segment : `${dir}/${segment}`;
    if (!statSync(join(rootDir, dir)).isDirectory()) {
      return dir === repoPath ? "file" : undefined;
    }
  }
  return "dir";
}

const scanned = new Map<string, ScannedPage>();
function scanPage(repoPath: string): ScannedPage {
  let page = scanned.get(repoPath);
  if (page === undefined) {
    page = scanMarkdown(readFileSync(join(rootDir, repoPath), "utf8"));
    scanned.set(repoPath, page);
  }
  return page;
}

function anchorsOf(repoPath: string): Set<string> {
  const page = scanPage(repoPath);
  return new Set([...githubSlugs(page.headings), ...page.htmlAnchors]);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

function closest(anchor: string, anchors: Set<string>): string {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of anchors) {
    const distance = editDistance(anchor, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best !== undefined && bestDistance <= Math.max(3, anchor.length / 2) ? ` (closest: #${best})` : "";
}

function httpProblem(url: string): string | undefined {
  if (/\s/.test(url)) return "contains whitespace";
  if (!/^https?:\/\/[^/?#\s]+/i.test(url)) return "is not of the form http(s)://host/…";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a valid URL";
  }
  const host = parsed.hostname;
  if (!(host.includes(".") || host === "localhost" || host.startsWith("[")))
    return `has no domain ("${host}")`;
  if (/[.,;:!?]$/.test(url)) return "ends in punctuation";
  return undefined;
}

/** What is wrong with one link of `page`, or undefined; `resolved` gets the Markdown page it leads to. */
function linkProblem(page: string, target: string, resolved: (page: string) => void): string | undefined {
  if (target === "") return "has an empty destination";
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(target)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https") return httpProblem(target);
  if (scheme === "mailto")
    return /^mailto:[^@\s]+@[^@\s]+\.[^@\s]+$/i.test(target) ? undefined : "is not a valid address";
  if (scheme !== undefined)
    return `uses the scheme "${scheme}:" (only relative links and http(s) are allowed)`;
  if (target.startsWith("//")) return "is protocol-relative; write https://";
  if (/^(?:https?[:/]|www\.)/i.test(target))
    return "looks like a URL without a well-formed http(s):// prefix";

  const hashAt = target.indexOf("#");
  const rawPath = (hashAt < 0 ? target : target.slice(0, hashAt)).replace(/\?.*$/, "");
  const rawAnchor = hashAt < 0 ? undefined : target.slice(hashAt + 1);
  let path: string;
  let anchor: string | undefined;
  try {
    path = decodeURIComponent(rawPath);
    anchor = rawAnchor === undefined ? undefined : decodeURIComponent(rawAnchor);
  } catch {
    return "has malformed %-escapes";
  }

  let repoPath: string;
  if (path === "") repoPath = page;
  else {
    repoPath = posix.normalize(path.startsWith("/") ? path.slice(1) : posix.join(posix.dirname(page), path));
    repoPath = repoPath.replace(/\/+$/, "");
    if (repoPath === "." || repoPath === "") repoPath = "";
    if (repoPath === ".." || repoPath.startsWith("../")) return "points outside the repository";
  }
  const kind = pathKind(repoPath);
  if (kind === undefined) return `points to ${repoPath}, which does not exist`;
  if (kind === "file" && repoPath.endsWith(".md")) resolved(repoPath);
  if (anchor === undefined) return undefined;
  if (anchor === "") return "has an empty #anchor";
  if (kind === "dir") return `has #${anchor}, but ${repoPath || "the repository root"} is a folder`;
  if (!repoPath.endsWith(".md")) {
    return /^L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?$/.test(anchor)
      ? undefined
      : `has #${anchor} on a non-Markdown file`;
  }
  const anchors = anchorsOf(repoPath);
  if (anchors.has(anchor)) return undefined;
  return `has #${anchor}, which no heading of ${repoPath} produces${closest(anchor, anchors)}`;
}

interface Report {
  problems: string[];
  /** Markdown pages each page links to. */
  edges: Map<string, Set<string>>;
}

function checkLinks(pages: readonly string[]): Report {
  const problems: string[] = [];
  const edges = new Map<string, Set<string>>();
  for (const page of pages) {
    const targets = new Set<string>();
    edges.set(page, targets);
    for (const link of scanPage(page).links) {
      if (link.malformed) {
        problems.push(
          `${page}:${link.line}: ${link.label}(${link.target} does not parse as a link (a space or unbalanced parenthesis in the destination?)`,
        );
        continue;
      }
      const problem = linkProblem(page, link.target, (target) => {
        if (target !== page) targets.add(target);
      });
      if (problem !== undefined)
        problems.push(`${page}:${link.line}: ${link.label}(${link.target}) ${problem}`);
    }
  }
  return { problems, edges };
}

/** docs pages not reachable from README.md through README.md and the docs themselves. */
function unreachableDocs(pages: readonly string[], edges: Map<string, Set<string>>): string[] {
  const isDoc = (page: string) => /^docs\/[^/]+\.md$/.test(page);
  const reached = new Set(["README.md"]);
  const queue = ["README.md"];
  for (let page = queue.shift(); page !== undefined; page = queue.shift()) {
    for (const next of edges.get(page) ?? []) {
      if (isDoc(next) && !reached.has(next)) {
        reached.add(next);
        queue.push(next);
      }
    }
  }
  return pages
    .filter((page) => isDoc(page) && !reached.has(page))
    .map((page) => {
      const from = [...edges]
        .filter(([source, targets]) => source !== page && targets.has(page))
        .map(([s]) => s);
      return from.length === 0
        ? `${page}:1: no page links to it (link it from README.md's Documentation list or a related doc)`
        : `${page}:1: not reachable from README.md; only linked from ${from.join(", ")}`;
    });
}

// ---------------------------------------------------------------------------------------------------

describe("the scanner", () => {
  test("slugs follow GitHub's rules", () => {
    expect(githubSlug("A pause's life")).toBe("a-pauses-life");
    expect(githubSlug("Recording only: `app.answer`")).toBe("recording-only-appanswer");
    expect(githubSlug("Postgres (`--backend postgres`)")).toBe("postgres---backend-postgres");
    expect(githubSlug("Taking a question back (`withdraw`)")).toBe("taking-a-question-back-withdraw");
    expect(githubSlug("See [the store](stores.md) and *more*")).toBe("see-the-store-and-more");
    expect(githubSlug("`snake_case` and _emphasis_")).toBe("snake_case-and-emphasis");
    expect(githubSlug("`pause-resume`: pause → resume")).toBe("pause-resume-pause--resume");
    expect(githubSlugs(["Events", "Events", "Events-1", "Events"])).toEqual([
      "events",
      "events-1",
      "events-1-1",
      "events-2",
    ]);
  });

  test("links in fenced code and inline code are not links", () => {
    const page = scanMarkdown(
      [
        "# Title",
        "See [one](a.md) and `[not](b.md)` and ``x `[no](c.md)` y``.",
        "```ts",
        "const x = [no](d.md);",
        "```",
        "  ~~~",
        "  [no](e.md)",
        "  ~~~",
        "A [link that",
        'wraps](f.md#anchor "title") and <https://example.com/x>.',
        "## Title",
        "Not [a link](a b.md).",
      ].join("\n"),
    );
    expect(
      page.links.map(({ line, target, malformed }) => `${line}:${target}${malformed ? " (malformed)" : ""}`),
    ).toEqual(["2:a.md", "10:f.md#anchor", "10:https://example.com/x", "12:a b.md) (malformed)"]);
    expect(githubSlugs(page.headings)).toEqual(["title", "title-1"]);
  });
});

describe("the Markdown pages", () => {
  const pages = markdownPages();
  const report = checkLinks(pages);

  test("are found", () => {
    expect(pages).toContain("README.md");
    expect(pages.filter((page) => page.startsWith("docs/")).length).toBeGreaterThan(10);
  });

  test("link only to files and headings that exist, and to well-formed URLs", () => {
    expect(
      report.problems,
      `${report.problems.length} broken link(s):\n${report.problems.join("\n")}`,
    ).toEqual([]);
  });

  test("leave no docs page unreachable from README.md", () => {
    const orphans = unreachableDocs(pages, report.edges);
    expect(orphans, `${orphans.length} unreachable docs page(s):\n${orphans.join("\n")}`).toEqual([]);
  });
});
