// The ledger: one SQLite-backed Durable Object, the only place arc-reaper's
// state lives, and its ways in. Webhooks record facts here (RPC), the alarm
// fires at the earliest due time, the cron's sweep runs here, the agents'
// WebSockets land here, and the admin views and /metrics are reached through
// the RpcTarget admin() returns. Each method is one call into the file that
// does it; what they share is built once, in the composition root
// (ledger-root.ts). Instance fields are only caches: any call may meet a fresh
// instance. Every way in that a request takes (a delivery, the door's batch, the
// cron's sweep, admin, metrics and health, the agent's WebSocket, logins) first
// or last re-asserts the alarm, at most once a minute (LedgerRoot.reassertAlarm):
// an alarm the runtime gave up is set again by the next request.
import { DurableObject } from "cloudflare:workers";
import type { AgentLink, AgentStatus } from "../agent-link/agent-link.ts";
import { migrate } from "../ledger/schema.ts";
import { SessionsTable, type BearerOutcome, type LoginAttempt, type LoginOutcome } from "../ledger/sessions-table.ts";
import type { Sql } from "../ledger/sql.ts";
import { errorText } from "../model/error-text.ts";
import { LedgerAdmin } from "./ledger-admin.ts";
import { alarmPass, ledgerPass, type PassOutcome } from "./ledger-pass.ts";
import { LedgerRoot } from "./ledger-root.ts";
import { countDoorBatch, receiveDelivery, type DoorBatch, type Receipt, type SignedDelivery } from "./receive-delivery.ts";
import { startSweepClock } from "./sweep-clock.ts";

/** What the ledger reads of its env: the settings as vars and secrets. */
export type LedgerEnv = Readonly<Record<string, unknown>>;

export class Ledger extends DurableObject<LedgerEnv> {
  protected readonly root: LedgerRoot;
  protected readonly sql: Sql;
  private readonly agent: AgentLink;

  constructor(ctx: DurableObjectState, env: LedgerEnv) {
    super(ctx, env);
    this.root = new LedgerRoot(ctx, env, () => this.settingsOverrides());
    this.sql = this.root.sql;
    this.agent = this.root.agent;
    void ctx.blockConcurrencyWhile(async () => {
      migrate(this.sql);
      await startSweepClock(ctx.storage, this.root.sweepEveryMs());
    });
  }

  /** A signed delivery: a replay is only counted; its facts are recorded idempotently, and the delivery counted. */
  async receive(delivery: SignedDelivery): Promise<Receipt> {
    const receipt = await receiveDelivery(this.root, delivery);
    await this.root.reassertAlarm();
    return receipt;
  }

  /** Deliveries the Worker answered without the ledger, counted in its isolate and sent here at most every 10 s. */
  async countBatch(batch: DoorBatch): Promise<void> {
    countDoorBatch(this.sql, batch, Date.now());
    await this.root.reassertAlarm();
  }

  /** One sweep at the cron's scheduled time (one pass; skipped when a sweep already ran after that time). */
  async sweep(scheduledTime: number): Promise<PassOutcome> {
    await this.root.reassertAlarm();
    return this.root.exclusive(() => ledgerPass(this.root, "sweep", scheduledTime));
  }

  /** Fires at the earliest due time; delivered at least once, so it is safe to run twice. */
  override async alarm(): Promise<void> {
    await this.root.exclusive(() => alarmPass(this.root));
  }

  /** Resolves once no sweep or alarm is running (tests and the local demo wait on it). */
  async idle(): Promise<void> {
    await this.root.reassertAlarm();
    await this.root.idle();
  }

  /** GET /agent, forwarded by the Worker once it checked AGENT_TOKEN: accepted with the Hibernation API. */
  override async fetch(request: Request): Promise<Response> {
    await this.root.reassertAlarm();
    return this.agent.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.agent.message(ws, message);
    await this.root.reassertAlarm();
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.agent.closed(ws, code, reason);
  }

  override async webSocketError(ws: WebSocket, error: unknown): Promise<void> {
    this.agent.closed(ws, 1006, errorText(error));
  }

  /** The in-cluster server is stopping: agents told to reconnect, none accepted here any more (src/http/drain-entrypoint.ts). */
  async drain(): Promise<number> {
    return this.agent.drain();
  }

  /** Whether a cluster's agent is connected and what it said (agent mode). */
  async agentStatus(cluster = "default"): Promise<AgentStatus> {
    await this.root.reassertAlarm();
    return this.agent.status(cluster);
  }

  /** The admin views and switches: runners, story, adminView, snapshot, agentStatuses, pause, resume, deepHealth. */
  async admin(): Promise<LedgerAdmin> {
    await this.root.reassertAlarm();
    return new LedgerAdmin(this.root);
  }

  /** A login attempt at the admin form: throttled per client address, then refused (counted) or a session. */
  async login(attempt: LoginAttempt): Promise<LoginOutcome> {
    await this.root.reassertAlarm();
    return new SessionsTable(this.sql).login(attempt);
  }

  /** Whether a session cookie's id (hashed) is live and was made with this ADMIN_TOKEN (hashed). */
  async checkSession(idHash: string, tokenHash: string, now: number): Promise<boolean> {
    return new SessionsTable(this.sql).check(idHash, tokenHash, now);
  }

  /** Logout: the session ends for every copy of its cookie. */
  async endSession(idHash: string): Promise<boolean> {
    return new SessionsTable(this.sql).end(idHash);
  }

  /** A bearer token on an admin or metrics route: the login's throttle per client address. */
  async bearer(attempt: { client: string; tokenMatches: boolean; now: number }): Promise<BearerOutcome> {
    await this.root.reassertAlarm();
    return new SessionsTable(this.sql).bearer(attempt);
  }

  /** Settings laid over the env's, as JSON ("" for none). Production has none: the test ledger (test/hooks) has its own. */
  protected settingsOverrides(): string {
    return "";
  }
}
