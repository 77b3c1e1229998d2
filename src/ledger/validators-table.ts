// What repeated GitHub GETs answered, for conditional requests (issue 47): per
// request, its validators (an ETag with the hash of the token that earned it,
// or a Last-Modified) and a summary of what the decision read, never the body.
// Bounded: at most MAX_ROWS rows (the oldest written go first, by id) and none
// older than MAX_AGE_MS (an ETag is worth nothing after its token's hour).
import type { Remembered, ValidatorStore } from "../github/conditional-read.ts";
import type { Sql, SqlRow } from "./sql.ts";

export const MAX_ROWS = 2_000;
/** Two installation tokens' lives: an ETag older than that was earned with a token no longer in use. */
export const MAX_AGE_MS = 2 * 3_600_000;

interface Row extends SqlRow {
  token: string;
  etag: string | null;
  last_modified: string | null;
  summary: string;
  stored_at: number;
}

export class ValidatorsTable implements ValidatorStore {
  private readonly sql: Sql;
  private readonly clock: () => number;
  constructor(sql: Sql, clock: () => number = Date.now) {
    this.sql = sql;
    this.clock = clock;
  }

  recall(request: string): Remembered | undefined {
    const row = this.sql.first<Row>("SELECT token, etag, last_modified, summary, stored_at FROM github_validators WHERE request = ?", request);
    if (!row) return undefined;
    if (row.stored_at < this.clock() - MAX_AGE_MS) {
      this.forget(request);
      return undefined;
    }
    return {
      token: row.token,
      ...(row.etag === null ? {} : { etag: row.etag }),
      ...(row.last_modified === null ? {} : { lastModified: row.last_modified }),
      summary: row.summary,
      storedAt: row.stored_at,
    };
  }

  /** Replaces the request's row (a new id: the newest), then drops the rows past MAX_ROWS, oldest written first. */
  remember(request: string, r: Remembered): void {
    this.sql.run(
      "INSERT OR REPLACE INTO github_validators (request, token, etag, last_modified, summary, stored_at) VALUES (?, ?, ?, ?, ?, ?)",
      request,
      r.token,
      r.etag ?? null,
      r.lastModified ?? null,
      r.summary,
      r.storedAt,
    );
    const last = this.sql.first<{ id: number }>("SELECT id FROM github_validators WHERE request = ?", request)?.id;
    if (last !== undefined && last > MAX_ROWS) this.sql.run("DELETE FROM github_validators WHERE id <= ?", last - MAX_ROWS);
  }

  forget(request: string): void {
    this.sql.run("DELETE FROM github_validators WHERE request = ?", request);
  }

  /**
   * Drops the rows older than MAX_AGE_MS (the hourly prune). Ages are on the real clock the client stamps them
   * with (tokens expire on it), not a pass's clock, which a test may set ahead.
   */
  prune(): number {
    return this.sql.run("DELETE FROM github_validators WHERE stored_at < ?", this.clock() - MAX_AGE_MS);
  }
}
