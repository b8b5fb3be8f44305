import type { Row } from "./harness.js";

const COLUMNS = [
  ["executions", "execs"],
  ["lost", "lost decisions"],
  ["beyond", "runs beyond guarantee"],
  ["stuck", "stuck"],
  ["doubleEnd", "double end events"],
  ["crashes", "process crashes"],
  ["missed", "points missed"],
] as const;

/** The numbers a scenario must keep at zero. */
export function faults(row: Row) {
  return {
    lost: row.lost,
    beyond: row.beyond,
    stuck: row.stuck,
    doubleEnd: row.doubleEnd,
    crashes: row.crashes,
    missed: row.missed,
  };
}

/** The summary table, then the notes of every scenario that was not clean. */
export function formatSummary(rows: readonly Row[], errors: readonly string[]): string {
  const width = Math.max(8, ...rows.map((r) => r.scenario.length)) + 2;
  const head = `${"scenario".padEnd(width)}${"store".padEnd(10)}${COLUMNS.map(([, h]) => h.padStart(h.length + 2)).join("")}`;
  const line = (label: string, store: string, values: Record<string, number>) =>
    `${label.padEnd(width)}${store.padEnd(10)}${COLUMNS.map(([k, h]) => String(values[k] ?? 0).padStart(h.length + 2)).join("")}`;
  const totals: Record<string, number> = {};
  for (const row of rows) for (const [k] of COLUMNS) totals[k] = (totals[k] ?? 0) + (row[k] as number);
  const out = [
    "AGBoss crash suite: every recorded answer carried out, each approved tool run once (or rerun with its key after a cut-off)",
    "",
    head,
    "-".repeat(head.length),
    ...rows.map((r) => line(r.scenario, r.store, r as unknown as Record<string, number>)),
    "-".repeat(head.length),
    line("total", "", totals),
  ];
  const dirty = rows.filter((r) => Object.values(faults(r)).some((n) => n > 0));
  const shown = process.env.CRASH_VERBOSE === "1" ? rows.filter((r) => r.notes.length > 0) : dirty;
  if (shown.length > 0 || errors.length > 0)
    out.push("", process.env.CRASH_VERBOSE === "1" ? "Notes:" : "What failed:");
  for (const r of shown) {
    out.push(`* ${r.scenario} [${r.store}]`);
    for (const note of r.notes) out.push(`    ${note}`);
  }
  for (const e of errors) out.push(`* ${e}`);
  return out.join("\n");
}
