// The ledger as tests and the bench run it: the production class plus the hooks
// they need, kept out of the production bundle (test/hooks/entry.ts exports this
// class under the production name, so wrangler.toml's binding finds it).
//  - useTestSettings: each test's ledger gets the settings of its stand-in tenants;
//  - alarmAt: the alarm's work at a simulated time (the randomized fleets);
//  - failAlarms: the next runs of the alarm throw (a full volume), and the last
//    of them drops the alarm as the runtime does after its retries;
//  - stepClock: what a step of the wall clock looks like to the ledger's storage
//    (the sweep clock's stamp and the alarm move the other way);
//  - seedHistory, seedFailedHistory: closed rows in bulk (the bench's sweeps against history);
//  - receiveLoop: recorded deliveries made inside the ledger (the bench's ledger rate);
//  - readOpen: the open rows read whole or to judge, many times (bench/read-open.ts);
//  - ARC_REAPER_TEST_LOG_BATCH: the bench's log lines several to a console.log (batch-console-logs.ts).
import { Ledger as ProductionLedger, type LedgerEnv } from "../../src/durable/ledger.ts";
import { ledgerPass } from "../../src/durable/ledger-pass.ts";
import { MemoryTable } from "../../src/ledger/memory-table.ts";
import { RunnersTable } from "../../src/ledger/runners-table.ts";
import { receiveLoop } from "./receive-loop.ts";
import type { SignedDelivery } from "../../src/durable/receive-delivery.ts";
import { seedFailedHistory, seedHistory } from "./seed-history.ts";
import { batchConsoleLogs } from "./batch-console-logs.ts";

/** Still refused unless the env says so, should this class ever be deployed by mistake. */
const TEST_HOOKS = "ARC_REAPER_TEST_HOOKS";
const SETTINGS_KEY = "test-settings";
const FAILURES_KEY = "test-alarm-failures";

export class Ledger extends ProductionLedger {
  constructor(ctx: DurableObjectState, env: LedgerEnv) {
    super(ctx, env);
    const batch = env.ARC_REAPER_TEST_LOG_BATCH;
    if (env[TEST_HOOKS] === "on" && typeof batch === "string") batchConsoleLogs(Number(batch));
  }

  async useTestSettings(vars: Record<string, string>): Promise<void> {
    this.refuseUnlessTesting("useTestSettings");
    new MemoryTable(this.sql).set(SETTINGS_KEY, vars);
  }

  /** The alarm's pass at `now`; while failAlarms says so it fails instead, and answers why (not thrown: an RPC's throw is an unhandled error in the test runner). */
  async alarmAt(now: number): Promise<{ ran: true } | { failed: string }> {
    this.refuseUnlessTesting("alarmAt");
    try {
      await this.failingAlarm();
    } catch (e) {
      return { failed: e instanceof Error ? e.message : String(e) };
    }
    await this.root.exclusive(() => ledgerPass(this.root, "alarm", now));
    return { ran: true };
  }

  /** The runtime's alarm, failing while failAlarms says so. */
  override async alarm(): Promise<void> {
    if (this.env[TEST_HOOKS] === "on") await this.failingAlarm();
    await super.alarm();
  }

  /**
   * The next `times` runs of the alarm (the runtime's alarm() and alarmAt alike) throw before doing anything, as
   * on a full volume; with `giveUp` (the default) the last of them also deletes the alarm, as the runtime does
   * once its retries are spent. Only a request that reaches the ledger sets it again (LedgerRoot.reassertAlarm).
   */
  async failAlarms(times: number, giveUp = true): Promise<void> {
    this.refuseUnlessTesting("failAlarms");
    const memory = new MemoryTable(this.sql);
    if (times > 0) memory.set(FAILURES_KEY, { left: times, giveUp });
    else memory.delete(FAILURES_KEY);
  }

  /**
   * The wall clock stepped by `ms` (negative: back), as the ledger's storage sees it: the stamps it wrote from
   * that clock move by -ms. That is the sweep clock's start (`sweep-ran-at`: after a step back, a start in the
   * future), the last sweep's completion (`last-sweep`: /metrics, /healthz/deep) and the alarm's time. Answers the stamp and the alarm after the step.
   */
  async stepClock(ms: number): Promise<{ sweepRanAt: number | null; alarm: number | null }> {
    this.refuseUnlessTesting("stepClock");
    const memory = new MemoryTable(this.sql);
    const ranAt = memory.get("sweep-ran-at");
    if (ranAt !== undefined) memory.set("sweep-ran-at", ranAt - ms);
    const last = memory.get("last-sweep");
    if (last) memory.set("last-sweep", { ...last, at: new Date(Date.parse(last.at) - ms).toISOString() });
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm !== null) await this.ctx.storage.setAlarm(alarm - ms);
    return { sweepRanAt: ranAt === undefined ? null : ranAt - ms, alarm: alarm === null ? null : alarm - ms };
  }

  async seedHistory(from: number, count: number): Promise<number> {
    this.refuseUnlessTesting("seedHistory");
    return seedHistory(this.sql, from, count, Date.now());
  }

  /** Closed Failed-runner rows of one scale set, deleted over the last `spreadMs` (the bench's Failed sweep). */
  async seedFailedHistory(from: number, count: number, scaleSet: string, spreadMs: number): Promise<number> {
    this.refuseUnlessTesting("seedFailedHistory");
    return seedFailedHistory(this.sql, from, count, Date.now(), scaleSet, spreadMs);
  }

  /** Recorded deliveries in bulk, each through receive() as a webhook's (the bench's 50,000 live runners). */
  async receiveMany(deliveries: SignedDelivery[]): Promise<number> {
    this.refuseUnlessTesting("receiveMany");
    for (const d of deliveries) await this.receive(d);
    return deliveries.length;
  }

  async receiveLoop(first: number, count: number): Promise<{ count: number; ms: number; perSecond: number }> {
    this.refuseUnlessTesting("receiveLoop");
    return receiveLoop((d) => this.receive(d), first, count);
  }

  /** Every open row read `times` times, whole or as the sweep reads them to judge (the bench's read-open): answers the rows of one read. */
  async readOpen(whole: boolean, times: number): Promise<number> {
    this.refuseUnlessTesting("readOpen");
    const runners = new RunnersTable(this.sql);
    let n = 0;
    for (let i = 0; i < times; i++) n = (whole ? runners.open() : runners.openToJudge()).length;
    return n;
  }

  protected override settingsOverrides(): string {
    if (this.env[TEST_HOOKS] !== "on") return "";
    return this.sql.first<{ value: string }>("SELECT value FROM memory WHERE key = ?", SETTINGS_KEY)?.value ?? "";
  }

  /** Throws while failAlarms says so; the last failure drops the alarm when told to give up. */
  private async failingAlarm(): Promise<void> {
    const memory = new MemoryTable(this.sql);
    const failures = memory.get(FAILURES_KEY);
    if (!failures) return;
    if (failures.left > 1) memory.set(FAILURES_KEY, { ...failures, left: failures.left - 1 });
    else {
      memory.delete(FAILURES_KEY);
      if (failures.giveUp) await this.ctx.storage.deleteAlarm();
    }
    throw new Error(`arc-reaper test ledger: the alarm fails (failAlarms; ${failures.left - 1} more)`);
  }

  private refuseUnlessTesting(what: string): void {
    if (this.env[TEST_HOOKS] !== "on") throw new Error(`arc-reaper test ledger: ${what} is refused unless ${TEST_HOOKS}=on`);
  }
}
