// Admin sessions and the login throttle, in the ledger so that every isolate
// sees the same ones: logout (a deleted row) ends a session everywhere at once,
// and failed logins from one address are counted together. The Worker hashes
// the cookie's id and the ADMIN_TOKEN before they get here; neither is stored.
import type { Sql } from "./sql.ts";

/** At most this many failed logins per client address in any minute; the next attempt is answered 429. */
const MAX_LOGIN_FAILURES = 5;
const LOGIN_WINDOW_MS = 60_000;

export interface LoginAttempt {
  /** CF-Connecting-IP, or "unknown". */
  client: string;
  /** Whether the submitted token was the ADMIN_TOKEN (checked by the Worker in constant time). */
  tokenMatches: boolean;
  /** For a good token: the session to create. */
  session: { idHash: string; tokenHash: string; ttlMs: number };
  now: number;
}

export type LoginOutcome =
  | { kind: "session"; expiresAt: number }
  | { kind: "refused"; failures: number }
  | { kind: "throttled"; failures: number; retryAfterSeconds: number };

export type BearerOutcome = { kind: "accepted" } | Exclude<LoginOutcome, { kind: "session" }>;

export class SessionsTable {
  private readonly sql: Sql;
  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** One login attempt, throttle first: while an address is over the limit even the right token is refused. */
  login(a: LoginAttempt): LoginOutcome {
    const checked = this.bearer(a);
    if (checked.kind !== "accepted") return checked;
    this.sql.run("DELETE FROM sessions WHERE expires_at <= ?", a.now);
    const expiresAt = a.now + a.session.ttlMs;
    this.sql.run(
      "INSERT INTO sessions (id_hash, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)",
      a.session.idHash,
      a.session.tokenHash,
      a.now,
      expiresAt,
    );
    return { kind: "session", expiresAt };
  }

  /**
   * A bearer token (or a login form's token) from a client address: the same throttle for every
   * route, so guesses at /metrics, /admin/runners or /healthz/deep count with the login's.
   */
  bearer(a: Pick<LoginAttempt, "client" | "tokenMatches" | "now">): BearerOutcome {
    const since = a.now - LOGIN_WINDOW_MS;
    const recent = this.sql.all<{ at: number }>("SELECT at FROM login_failures WHERE client = ? AND at > ? ORDER BY at", a.client, since);
    if (recent.length >= MAX_LOGIN_FAILURES) {
      // Allowed again once the oldest failure that counts leaves the window.
      const oldest = recent[recent.length - MAX_LOGIN_FAILURES]!.at;
      return { kind: "throttled", failures: recent.length, retryAfterSeconds: Math.max(1, Math.ceil((oldest + LOGIN_WINDOW_MS - a.now) / 1000)) };
    }
    if (!a.tokenMatches) {
      this.sql.run("DELETE FROM login_failures WHERE at <= ?", since);
      this.sql.run("INSERT INTO login_failures (client, at) VALUES (?, ?)", a.client, a.now);
      return { kind: "refused", failures: recent.length + 1 };
    }
    return { kind: "accepted" };
  }

  /** A live session made with the current ADMIN_TOKEN; a stale one (expired, or of a rotated token) is deleted. */
  check(idHash: string, tokenHash: string, now: number): boolean {
    const row = this.sql.first<{ token_hash: string; expires_at: number }>("SELECT token_hash, expires_at FROM sessions WHERE id_hash = ?", idHash);
    if (!row) return false;
    if (row.expires_at > now && row.token_hash === tokenHash) return true;
    this.sql.run("DELETE FROM sessions WHERE id_hash = ?", idHash);
    return false;
  }

  /** Logout: the session is gone for every copy of its cookie. */
  end(idHash: string): boolean {
    return this.sql.run("DELETE FROM sessions WHERE id_hash = ?", idHash) > 0;
  }
}
