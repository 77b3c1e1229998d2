// One focused piece of table 3 (or 6): steady sweeps over N live runners, their
// workerd CPU and a CPU profile of one more, without the rest of the bench.
//   node bench/steady-sweep.ts [runners] [steady sweeps] [mix: mix|running]   (seeded in bulk; BENCH_NO_PROFILE=1: no profile)
import { measureSweep } from "./sweep-cost.ts";
import { ALL_RUNNING, MIX } from "./sweep-mix.ts";
import { profileTable } from "./tables.ts";

const runners = Number(process.argv[2] ?? 10_000);
const steadySweeps = Number(process.argv[3] ?? 3);
const mix = process.argv[4] === "running" ? ALL_RUNNING : MIX;
const log = (line: string) => process.stdout.write(`${line}\n`);
const r = await measureSweep({ runners, steadySweeps, mix, profile: process.env["BENCH_NO_PROFILE"] === undefined, bulk: true }, log);
const cpus = r.steady.map((s) => s.cpuMs).sort((a, b) => a - b);
log(`steady CPU ms: ${r.steady.map((s) => s.cpuMs).join(", ")}; median ${cpus[Math.floor(cpus.length / 2)]}`);
log(`steady rows read / written: ${r.steady.map((s) => `${s.rowsRead}/${s.rowsWritten}`).join(", ")}; first ${r.first.cpuMs} ms`);
log(profileTable(r.profile?.top ?? []));
