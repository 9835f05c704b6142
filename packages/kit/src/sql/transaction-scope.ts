import type { SqlExecutor } from "./sql.js";

export interface TransactionScope {
  readonly tx: SqlExecutor;
  /** Marks the transaction over: any later `tx.query` rejects instead of running. */
  end(): void;
}

/**
 * Wraps a transaction's executor so that a `tx` kept past its callback cannot run statements
 * outside the transaction (on `pg`, on a connection already handed to someone else).
 */
export function createTransactionScope(run: SqlExecutor["query"]): TransactionScope {
  let open = true;
  return {
    tx: {
      query(text, params) {
        if (!open) return Promise.reject(new Error("transaction is already finished"));
        return run(text, params);
      },
    },
    end() {
      open = false;
    },
  };
}
