import { AsyncLocalStorage } from "node:async_hooks";
import { mkdir } from "node:fs/promises";
import { PGlite, type Results } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import type { Sql, SqlExecutor, SqlResult } from "./sql.js";
import { createTransactionScope } from "./transaction-scope.js";

export interface PgliteSqlOptions {
  /** Directory holding the database files; absent: in memory, gone at `close()`. */
  dataDir?: string;
}

/** What both PGlite and one of its transactions can run. */
interface PgliteRunner {
  query<Row>(text: string, params?: unknown[]): Promise<Results<Row>>;
  exec(text: string): Promise<Results[]>;
}

function toSqlResult<Row>(result: Results<Row> | undefined): SqlResult<Row> {
  return { rows: result?.rows ?? [], rowCount: result?.rowCount ?? 0 };
}

async function run<Row>(
  runner: PgliteRunner,
  text: string,
  params?: unknown[],
): Promise<SqlResult<Row>> {
  try {
    if (params && params.length > 0) return toSqlResult(await runner.query<Row>(text, params));
    // `query` prepares its text, which allows one statement only; `exec` takes a whole script.
    const results = await runner.exec(text);
    return toSqlResult(results[results.length - 1] as Results<Row> | undefined);
  } catch (error) {
    // PGlite's errors carry the statement's parameter values (what users stored, ciphertexts),
    // and a logged error is printed whole: the statement stays, the values do not, as with pg.
    if (typeof error === "object" && error !== null && "params" in error) {
      delete (error as { params?: unknown }).params;
    }
    throw error;
  }
}

/**
 * A statement on the outer Sql issued from inside a transaction callback can only run once that
 * transaction ends, so it waits for the end; if the callback awaits it, the end never comes. Past
 * this wait it fails naming the mistake instead of hanging. Long enough for a statement that work
 * started in the callback (not awaited there) queues behind a slow transaction.
 */
const OWN_TRANSACTION_WAIT_MS = 10_000;

interface TransactionState {
  open: boolean;
  ended: Promise<void>;
  end(): void;
}

function transactionState(): TransactionState {
  let resolve!: () => void;
  const state: TransactionState = {
    open: true,
    ended: new Promise<void>((r) => {
      resolve = r;
    }),
    end() {
      state.open = false;
      resolve();
    },
  };
  return state;
}

/**
 * The SQL port on PGlite (Postgres compiled to WASM) with pgvector. PGlite has one connection:
 * its `query` and `transaction` share one lock, so a statement issued while a transaction runs
 * waits for it to end instead of landing inside it.
 */
export async function createPgliteSql(options: PgliteSqlOptions = {}): Promise<Sql> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir: options.dataDir, extensions: { vector } });
  try {
    await db.exec("CREATE EXTENSION IF NOT EXISTS vector");
  } catch (error) {
    await db.close();
    throw error;
  }

  let closing: Promise<void> | undefined;
  // Marks the async context of each running transaction callback (see afterOwnTransaction).
  const inTransaction = new AsyncLocalStorage<TransactionState>();
  const afterOwnTransaction = async (what: string) => {
    const state = inTransaction.getStore();
    if (!state?.open) return;
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `${what} on the outer Sql inside sql.transaction() waited ${OWN_TRANSACTION_WAIT_MS} ms: ` +
                "PGlite has one connection, so it runs only after that transaction ends; " +
                "use the transaction's executor (tx)",
            ),
          ),
        OWN_TRANSACTION_WAIT_MS,
      );
    });
    try {
      await Promise.race([state.ended, stuck]);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    dialect: "pglite",

    async query<Row>(text: string, params?: unknown[]) {
      await afterOwnTransaction("a query");
      return run<Row>(db, text, params);
    },

    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      await afterOwnTransaction("a nested transaction");
      return db.transaction(async (pgliteTx) => {
        const scope = createTransactionScope((text, params) => run(pgliteTx, text, params));
        const state = transactionState();
        try {
          return await inTransaction.run(state, () => fn(scope.tx));
        } finally {
          state.end();
          scope.end();
        }
      });
    },

    async hasVector() {
      return true;
    },

    async ping() {
      await afterOwnTransaction("ping");
      await db.query("SELECT 1");
    },

    close() {
      closing ??= db.close().finally(() => inTransaction.disable());
      return closing;
    },
  };
}
