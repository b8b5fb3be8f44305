/**
 * Serialises write transactions inside one process. SQLite needs it when two stores in one process
 * share a file: a `begin immediate` that waits for the lock blocks the thread, and with it the
 * other store's transaction that holds the lock.
 */
export type WriteGate = <T>(run: () => Promise<T>) => Promise<T>;

/** A gate that lets everything through: for backends whose waits do not block the thread. */
export const openWriteGate: WriteGate = (run) => run();

/** A gate that runs one write transaction at a time, in arrival order. */
export function createSerialWriteGate(): WriteGate {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(run: () => Promise<T>): Promise<T> => {
    const result = tail.then(run, run);
    tail = result.catch(() => undefined);
    return result;
  };
}
