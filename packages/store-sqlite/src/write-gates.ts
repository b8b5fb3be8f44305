import { createSerialWriteGate, type WriteGate } from "@agboss/store-kysely";

const gates = new Map<string, { gate: WriteGate; users: number }>();

/**
 * The write gate shared by every store of this process on one file: a blocked `begin immediate`
 * would stall the thread, and with it the store holding the lock. @internal
 */
export function acquireWriteGate(file: string): { gate: WriteGate; release(): void } {
  const entry = gates.get(file) ?? { gate: createSerialWriteGate(), users: 0 };
  entry.users += 1;
  gates.set(file, entry);
  let released = false;
  return {
    gate: entry.gate,
    release() {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users === 0 && gates.get(file) === entry) gates.delete(file);
    },
  };
}
