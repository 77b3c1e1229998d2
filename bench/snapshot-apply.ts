// The agent's snapshot of a large fleet applied by the ledger (issue 25), measured
// under `wrangler dev` in agent mode: the real agent is stopped and this process
// dials GET /agent with the agent token, says hello for the fleet's namespaces and
// sends the real snapshotMessages of fleetOfRunners(n). First part by part, each
// part's workerd CPU read once workerd is idle again; then a second snapshot back
// to back, as an agent sends it after a reconnect (the whole view replaced), with
// its wall time. The ledger's view must then hold every runner (the /admin banner),
// so a dropped part cannot pass unseen. Then sweeps over that view, none of whose
// runners the ledger has a row for (busy, unseen): two by default (a sweep gives
// 10,000 runners their first look), more with --sweeps=N.
//   node bench/snapshot-apply.ts [runners] [--sweeps=N]   (N sweeps over the view at most; 2 by default)
import WebSocket from "ws";
import { startLocalStack, waitFor, type LocalStack } from "../scripts/lib/local-stack.ts";
import type { AgentMessage } from "../src/cluster/agent-protocol.ts";
import { snapshotMessages } from "../src/agent/runner-view.ts";
import { loadAverage } from "./machine.ts";
import { cpuMs, waitIdle, workerdPidsFor } from "./proc.ts";
import { fleetOfRunners } from "./snapshot-size.ts";
import { snapshotApplyTable } from "./tables.ts";
import { BENCH_LOGS, PRODUCTION_SETTINGS } from "./sweep-cost.ts";

/** One sweep over the agent's view. */
export interface ViewSweep {
  checked: number;
  deferred: number;
  githubCalls: number;
  rowsRead: number;
  rowsWritten: number;
  decisionLines: number;
  wallMs: number;
  cpuMs: number;
}

export interface SnapshotApply {
  runners: number;
  messages: number;
  largestBytes: number;
  /** workerd CPU of each part, sent one at a time (ms, in order). */
  partCpuMs: number[];
  /** The part-by-part snapshot's CPU, all parts. */
  partsTotalCpuMs: number;
  /** The second snapshot, sent back to back: its CPU and its wall time until the ledger logged it whole. */
  wholeCpuMs: number;
  wholeWallMs: number;
  /** Runners in the ledger's view after each snapshot (the /admin banner). */
  viewRunners: number[];
  /** Messages the ledger sent this dialler (orders, reads): none expected. */
  ledgerMessages: number;
  sweeps: ViewSweep[];
  /** Why the sweeps stopped early, if one failed. */
  sweepError?: string;
  load: string[];
}

/** The fleet's namespaces (fleetOfRunners spreads runners over 12). */
export const FLEET_NAMESPACES = Array.from({ length: 12 }, (_, i) => `arc-runners-${String.fromCharCode(97 + i)}`);
const FLEET_REPO = "octo-organization/a-rather-long-repository-name";
/** Sweeps over the view by default: two (50,000 first looks take 5, then one steady: --sweeps=6). */
const SWEEPS = 2;

async function viewRunners(stack: LocalStack): Promise<number> {
  const res = await fetch(`${stack.url}/admin`, { headers: { authorization: `Bearer ${stack.adminToken}` }, signal: AbortSignal.timeout(60_000) });
  const page = await res.text();
  const n = /· (\d+) runners in view/.exec(page)?.[1];
  if (res.status !== 200 || n === undefined) throw new Error(`GET /admin answered ${res.status} without "N runners in view"`);
  return Number(n);
}

function dialAgent(stack: LocalStack): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${stack.url.replace(/^http/, "ws")}/agent`, {
      headers: { authorization: `Bearer ${stack.agentToken}` },
      handshakeTimeout: 30_000,
      maxPayload: 64 * 1024 * 1024,
    });
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`GET /agent answered ${res.statusCode}`)));
  });
}

const send = (ws: WebSocket, m: AgentMessage): Promise<void> =>
  new Promise((resolve, reject) => ws.send(JSON.stringify(m), (e) => (e ? reject(e) : resolve())));

async function measureSweepOnce(stack: LocalStack, pids: readonly number[], log: (line: string) => void): Promise<ViewSweep> {
  if (!(await waitIdle(pids, { quietMsPerSecond: 20, timeoutMs: 60_000 }))) log("  workerd did not go idle before the sweep");
  await stack.github.clearCalls();
  const cpu0 = cpuMs(pids);
  const t0 = performance.now();
  const { summary, decisions } = await stack.sweep({ timeoutMs: 900_000 });
  const wallMs = performance.now() - t0;
  await waitIdle(pids, { quietMsPerSecond: 20, timeoutMs: 60_000 });
  return {
    checked: summary.checked,
    deferred: summary.deferred ?? 0,
    githubCalls: (await stack.github.calls()).length,
    rowsRead: summary.rowsRead,
    rowsWritten: summary.rowsWritten,
    decisionLines: decisions.length,
    wallMs,
    cpuMs: cpuMs(pids) - cpu0,
  };
}

/** sweeps: at most this many sweeps over the view (they stop earlier once every runner had its first look and one steady sweep ran). */
export async function measureSnapshotApply(count: number, log: (line: string) => void, opts: { sweeps?: number } = {}): Promise<SnapshotApply> {
  const load = [loadAverage()];
  const stack = await startLocalStack({
    agent: {},
    namespace: FLEET_NAMESPACES[0],
    repositories: [FLEET_REPO],
    settings: { ...PRODUCTION_SETTINGS, REAPER_NAMESPACES: FLEET_NAMESPACES.join(","), ...BENCH_LOGS },
    startTimeoutMs: 120_000,
  });
  let ws: WebSocket | undefined;
  try {
    // The real agent leaves; this process speaks for it.
    await stack.agent?.stop();
    const pids = workerdPidsFor(Number(new URL(stack.url).port));
    if (pids.length === 0) throw new Error("snapshot apply: found no workerd process under wrangler dev");
    ws = await dialAgent(stack);
    let ledgerMessages = 0;
    ws.on("message", () => ledgerMessages++);
    await send(ws, { type: "hello", version: "bench-snapshot", namespaces: FLEET_NAMESPACES, dryRun: false });
    const runners = fleetOfRunners(count);
    const freshness = FLEET_NAMESPACES.map((namespace) => ({ namespace, wholeMsAgo: 0 }));
    const idle = () => waitIdle(pids, { quietMsPerSecond: 20, timeoutMs: 60_000 });

    // 1. Part by part: each part's CPU on its own.
    const parts = snapshotMessages(runners, "bench-parts", undefined, freshness);
    const largestBytes = Math.max(...parts.map((m) => Buffer.byteLength(JSON.stringify(m))));
    await idle();
    const partCpuMs: number[] = [];
    for (const part of parts) {
      const cpu0 = cpuMs(pids);
      await send(ws, part);
      if (!(await idle())) log(`  workerd did not go idle after part ${partCpuMs.length + 1}`);
      partCpuMs.push(cpuMs(pids) - cpu0);
    }
    const viewAfterParts = await viewRunners(stack);
    // In order, so that a cost growing with the rows already in (a pass over them per part) shows.
    log(`  each part's CPU in order (ms): ${partCpuMs.join(" ")}`);
    log(`  part by part: ${parts.length} parts, ${Math.max(...partCpuMs)} ms CPU at most; the view holds ${viewAfterParts} runners`);
    load.push(loadAverage());

    // 2. Back to back, as after a reconnect: the view is replaced whole.
    const from = stack.logLines("agent snapshot").length;
    await idle();
    const cpu0 = cpuMs(pids);
    const t0 = performance.now();
    for (const part of snapshotMessages(runners, "bench-whole", undefined, freshness)) await send(ws, part);
    await waitFor("the ledger to log the whole snapshot", async () => (stack.logLines("agent snapshot").length > from ? true : undefined), 600_000, 50);
    const wholeWallMs = performance.now() - t0;
    await idle();
    const wholeCpuMs = cpuMs(pids) - cpu0;
    const viewAfterWhole = await viewRunners(stack);
    log(`  back to back: ${(wholeCpuMs / 1000).toFixed(2)} s CPU, ${(wholeWallMs / 1000).toFixed(1)} s wall; the view holds ${viewAfterWhole} runners`);
    load.push(loadAverage());
    for (const [what, n] of [
      ["part by part", viewAfterParts],
      ["back to back", viewAfterWhole],
    ] as const)
      if (n !== count) throw new Error(`snapshot apply: after the snapshot sent ${what} the ledger's view holds ${n} runners, not ${count}: a part was lost`);

    // 3. Sweeps over the view, every runner busy and unseen (no row yet): a sweep gives at most 10,000 their
    // first look, so sweeps follow until none waits, then one steady sweep (bounded).
    const sweeps: ViewSweep[] = [];
    let sweepError: string | undefined;
    while (sweeps.length < (opts.sweeps ?? SWEEPS)) {
      // A sweep that fails (e.g. the scheduled trigger's answer cut off by a timeout) ends the sweeps, not the figures above.
      const s = await measureSweepOnce(stack, pids, log).catch((e: unknown) => void (sweepError = `sweep ${sweeps.length + 1}: ${String(e)}`));
      if (!s) break;
      sweeps.push(s);
      log(
        `  sweep: ${s.checked} checked, ${s.deferred} deferred, ${s.githubCalls} GitHub calls, ${s.rowsRead} rows read, ${s.rowsWritten} written, ${s.decisionLines} decision lines, ${(s.cpuMs / 1000).toFixed(2)} s CPU`,
      );
      if (s.deferred === 0 && sweeps.at(-2)?.deferred === 0) break;
    }
    if (sweepError) log(`  ${sweepError}`);
    load.push(loadAverage());
    return {
      runners: count,
      messages: parts.length,
      largestBytes,
      partCpuMs,
      partsTotalCpuMs: partCpuMs.reduce((s, n) => s + n, 0),
      wholeCpuMs,
      wholeWallMs,
      viewRunners: [viewAfterParts, viewAfterWhole],
      ledgerMessages,
      sweeps,
      ...(sweepError ? { sweepError } : {}),
      load,
    };
  } finally {
    ws?.terminate();
    await stack.stop();
  }
}

if (import.meta.main) {
  const sweeps = process.argv.find((a) => a.startsWith("--sweeps="))?.slice("--sweeps=".length);
  const count = process.argv.slice(2).find((a) => /^\d+$/.test(a));
  const r = await measureSnapshotApply(Number(count ?? 50_000), (line) => console.log(line), sweeps ? { sweeps: Number(sweeps) } : {});
  console.log(`\n${snapshotApplyTable(r)}`);
}
