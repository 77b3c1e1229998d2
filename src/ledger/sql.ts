// The ledger's SQL face with its cost counted: every statement's rows read and
// written add up, so a sweep, an alarm or a delivery can report what it cost.

export interface SqlCost {
  rowsRead: number;
  rowsWritten: number;
}

export type SqlValue = string | number | null;
export type SqlRow = Record<string, SqlStorageValue>;

export class Sql {
  readonly cost: SqlCost = { rowsRead: 0, rowsWritten: 0 };
  private readonly storage: SqlStorage;
  constructor(storage: SqlStorage) {
    this.storage = storage;
  }

  /** All rows of one statement. */
  all<T extends SqlRow = SqlRow>(query: string, ...bindings: SqlValue[]): T[] {
    const cursor = this.storage.exec<T>(query, ...bindings);
    const rows = cursor.toArray();
    this.cost.rowsRead += cursor.rowsRead;
    this.cost.rowsWritten += cursor.rowsWritten;
    return rows;
  }

  /**
   * All rows of one statement as arrays, in its columns' order. workerd builds `all`'s row objects
   * property by property: over 50,000 rows of 33 columns this takes a third of the CPU (0.3 s, not 1 s).
   */
  rows(query: string, ...bindings: SqlValue[]): SqlStorageValue[][] {
    const cursor = this.storage.exec(query, ...bindings);
    const rows = Array.from(cursor.raw());
    this.cost.rowsRead += cursor.rowsRead;
    this.cost.rowsWritten += cursor.rowsWritten;
    return rows;
  }

  /** All rows of one statement as arrays, with its columns' names (a backup: every table whole). */
  table(query: string): { columns: string[]; rows: SqlStorageValue[][] } {
    const cursor = this.storage.exec(query);
    const rows = Array.from(cursor.raw());
    this.cost.rowsRead += cursor.rowsRead;
    return { columns: cursor.columnNames, rows };
  }

  /** The first row, or undefined. */
  first<T extends SqlRow = SqlRow>(query: string, ...bindings: SqlValue[]): T | undefined {
    return this.all<T>(query, ...bindings)[0];
  }

  /** A statement run for its effect; answers the rows it wrote. */
  run(query: string, ...bindings: SqlValue[]): number {
    const cursor = this.storage.exec(query, ...bindings);
    for (const _ of cursor) {
      // drain: the counts are final once the cursor is consumed
    }
    this.cost.rowsRead += cursor.rowsRead;
    this.cost.rowsWritten += cursor.rowsWritten;
    return cursor.rowsWritten;
  }
}
