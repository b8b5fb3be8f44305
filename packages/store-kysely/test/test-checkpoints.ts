import { randomUUID } from "node:crypto";
import type { Checkpoint } from "@langchain/langgraph-checkpoint";

// Checkpoints for the store tests that put them by hand, as LangGraph would.

let sequence = 0;

/** A version-4 checkpoint holding `values`; ids sort in creation order, as LangGraph's do. */
export function checkpoint(values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  return {
    v: 4,
    id: `${String(++sequence).padStart(10, "0")}-${randomUUID()}`,
    ts: new Date().toISOString(),
    channel_values: values,
    channel_versions: versions,
    versions_seen: {},
  };
}

/** The metadata every such put carries. */
export const META = { source: "loop" as const, step: 1, parents: {} };
