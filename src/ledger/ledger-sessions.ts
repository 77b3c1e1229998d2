// The admin sessions and the bearer throttle, behind one RpcTarget the ledger
// returns (`ledger.sessions()`): logins, session checks, logouts, bearer tokens.
import { RpcTarget } from "cloudflare:workers";
import { SessionsTable, type BearerOutcome, type LoginAttempt, type LoginOutcome } from "./sessions-table.ts";
import type { Sql } from "./sql.ts";

export class LedgerSessions extends RpcTarget {
  readonly #sql: Sql;

  constructor(sql: Sql) {
    super();
    this.#sql = sql;
  }

  /** A login attempt at the admin form: throttled per client address, then refused (counted) or a session. */
  login(attempt: LoginAttempt): LoginOutcome {
    return new SessionsTable(this.#sql).login(attempt);
  }

  /** Whether a session cookie's id (hashed) is live and was made with this ADMIN_TOKEN (hashed). */
  checkSession(idHash: string, tokenHash: string, now: number): boolean {
    return new SessionsTable(this.#sql).check(idHash, tokenHash, now);
  }

  /** Logout: the session ends for every copy of its cookie. */
  endSession(idHash: string): boolean {
    return new SessionsTable(this.#sql).end(idHash);
  }

  /** A bearer token on an admin or metrics route: the login's throttle per client address. */
  bearer(attempt: { client: string; tokenMatches: boolean; now: number }): BearerOutcome {
    return new SessionsTable(this.#sql).bearer(attempt);
  }
}
