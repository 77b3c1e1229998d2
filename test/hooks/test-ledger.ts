// The ledger as tests and the bench run it: the production class plus the hooks
// they need, kept out of the production bundle (test/hooks/entry.ts exports this
// class under the production name, so wrangler.toml's binding finds it).
//  - useTestSettings: each test's ledger gets the settings of its stand-in tenants;
//  - alarmAt: the alarm's work at a simulated time (the randomized fleets);
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

  async alarmAt(now: number): Promise<void> {
    this.refuseUnlessTesting("alarmAt");
    await this.root.exclusive(() => ledgerPass(this.root, "alarm", now));
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

  private refuseUnlessTesting(what: string): void {
    if (this.env[TEST_HOOKS] !== "on") throw new Error(`arc-reaper test ledger: ${what} is refused unless ${TEST_HOOKS}=on`);
  }
}
