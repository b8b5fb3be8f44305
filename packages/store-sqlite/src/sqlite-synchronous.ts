/** The `synchronous` settings the SQLite store offers. */
export const SqliteSynchronous = {
  /**
   * Every commit is on disk before it returns, WAL included: a power loss keeps every committed pause.
   * The default.
   */
  Full: "FULL",
  /**
   * Syncs the WAL only at checkpoints: faster commits, but a power loss (not a crash of the process)
   * can lose the last transactions. Opt in for throughput when losing a recent pause is acceptable.
   */
  Normal: "NORMAL",
} as const;
export type SqliteSynchronous = (typeof SqliteSynchronous)[keyof typeof SqliteSynchronous];
