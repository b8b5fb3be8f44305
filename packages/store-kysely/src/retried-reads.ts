import { type ConnectionProvider, type DatabaseConnection, type Dialect, type Driver, Kysely } from "kysely";
import type { FaultRetry } from "./fault-retry.js";

/**
 * A kysely instance over `db`'s connections whose every statement is retried after a transient fault:
 * each statement is provided its own connection, so a retry runs it again, alone, on a fresh one. The
 * store reads through it and through nothing else; it serves single statements only, never
 * `transaction()` or `connection()`, which would run a whole callback again. Writes go through
 * {@link WriteTransactions} on `db` itself. `before`, if given, runs first, and the statement waits
 * for what it returns. @internal
 */
export function withRetriedReads<DB>(
  db: Kysely<DB>,
  retry: FaultRetry,
  before?: () => Promise<void> | undefined,
): Kysely<DB> {
  const executor = db.getExecutor();
  const provider: ConnectionProvider = {
    provideConnection: (consumer, options) => {
      const run = () => retry.read(() => executor.provideConnection(consumer, options));
      const waiting = before?.();
      return waiting === undefined ? run() : waiting.then(run);
    },
  };
  return new Kysely<DB>({
    config: { dialect: SINGLE_STATEMENTS },
    dialect: SINGLE_STATEMENTS,
    driver: SINGLE_STATEMENTS_DRIVER,
    executor: executor.withConnectionProvider(provider),
  });
}

function refuse(): never {
  throw new Error(
    "The store's read instance runs single statements only: run transactions on the store's `db`.",
  );
}

/** Stands where kysely wants a driver: the connections come from the executor's provider. */
const SINGLE_STATEMENTS_DRIVER: Driver = {
  init: async () => undefined,
  acquireConnection: async (): Promise<DatabaseConnection> => refuse(),
  beginTransaction: async () => refuse(),
  commitTransaction: async () => refuse(),
  rollbackTransaction: async () => refuse(),
  releaseConnection: async () => undefined,
  destroy: async () => undefined,
};

const SINGLE_STATEMENTS: Dialect = {
  createDriver: () => SINGLE_STATEMENTS_DRIVER,
  createQueryCompiler: refuse,
  createAdapter: refuse,
  createIntrospector: refuse,
};
