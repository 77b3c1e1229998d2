// The ledger's online backup and restore at 10,000 tracked runners (issue 44), under `wrangler dev`:
// runners seeded in bulk (the sweep benches' mix of running, waiting, finished and gone), then
// GET /admin/backup timed (wall, and the ledger's own read of every table), then POST /admin/restore
// of that file into a ledger of another name timed, and the restored ledger backed up again: its
// rows must be the same. Figures: the ledger's database size, the backup's size, the times.
//   node bench/ledger-backup.ts [runners]
import { startLocalStack } from "../scripts/lib/local-stack.ts";
import { loadAverage } from "./machine.ts";
import { BENCH_LOGS, PRODUCTION_SETTINGS, seedLive } from "./sweep-cost.ts";
import { mixFor } from "./sweep-mix.ts";

const runners = Number(process.argv[2] ?? 10_000);
const stack = await startLocalStack({ settings: { ...PRODUCTION_SETTINGS, ...BENCH_LOGS }, startTimeoutMs: 120_000 });
const auth = { authorization: `Bearer ${stack.adminToken}` };
const body = (text: string) => text.slice(text.indexOf("\n") + 1);
try {
  await seedLive(stack, [], mixFor(runners, Date.now()), [], true);
  let t0 = performance.now();
  const taken = await fetch(`${stack.url}/admin/backup`, { headers: auth, signal: AbortSignal.timeout(120_000) });
  const text = await taken.text();
  const backupMs = performance.now() - t0;
  if (taken.status !== 200) throw new Error(`GET /admin/backup answered ${taken.status}: ${text.slice(0, 300)}`);
  const header = JSON.parse(text.slice(0, text.indexOf("\n"))) as { tables: Record<string, { rows: number }> };
  const logged = stack.logLines("ledger backed up").at(-1) ?? {};
  t0 = performance.now();
  const restored = await fetch(`${stack.url}/admin/restore?ledger=bench-restored`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/x-ndjson" },
    body: text,
    signal: AbortSignal.timeout(120_000),
  });
  const answer = await restored.text();
  const restoreMs = performance.now() - t0;
  if (restored.status !== 200) throw new Error(`POST /admin/restore answered ${restored.status}: ${answer.slice(0, 300)}`);
  const restoredLog = stack.logLines("ledger restored").at(-1) ?? {};
  const figures = {
    runners: header.tables.runners?.rows,
    rows: Object.values(header.tables).reduce((n, t) => n + t.rows, 0),
    databaseBytes: logged.databaseBytes,
    backupBytes: text.length,
    backupWallMs: Math.round(backupMs),
    backupReadMs: logged.readMs,
    restoreWallMs: Math.round(restoreMs),
    restoreLedgerMs: restoredLog.ms,
    restoredDatabaseBytes: restoredLog.databaseBytes,
    load: loadAverage(),
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  if (!body(text).length) throw new Error("the backup is empty");
} finally {
  await stack.stop();
}
