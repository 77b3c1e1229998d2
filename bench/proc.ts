// CPU time of the workerd processes behind a `wrangler dev`, read from /proc.
// workerd freezes Date.now() between I/O, so the Worker cannot time its own
// CPU; utime + stime from outside can, and include the runtime's own work.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

interface Stat {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

function stat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm is in parentheses and may hold spaces: split after the last ")".
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const fields = text.slice(close + 2).split(" ");
    // After comm: state(0) ppid(1) ... utime(11) stime(12)
    return { pid, ppid: Number(fields[1]), comm, ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

function allStats(): Stat[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => stat(Number(d)) ?? []);
}

function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
}

function wranglersServing(port: number, stats: readonly Stat[]): Stat[] {
  return stats.filter((s) => {
    const args = cmdline(s.pid);
    const i = args.indexOf("--port");
    return args.some((a) => a.endsWith("wrangler.js")) && i >= 0 && args[i + 1] === String(port);
  });
}

/** The value of a flag on the command line of the `wrangler dev` serving `port`, e.g. --persist-to. */
export function wranglerFlag(port: number, flag: string): string | undefined {
  for (const s of wranglersServing(port, allStats())) {
    const args = cmdline(s.pid);
    const i = args.indexOf(flag);
    if (i >= 0 && args[i + 1] !== undefined) return args[i + 1];
  }
  return undefined;
}

/** The workerd processes under the wrangler that serves `port` (wrangler dev starts two: a proxy and the Worker's). */
export function workerdPidsFor(port: number): number[] {
  const stats = allStats();
  const roots = wranglersServing(port, stats);
  const byParent = new Map<number, Stat[]>();
  for (const s of stats) byParent.set(s.ppid, [...(byParent.get(s.ppid) ?? []), s]);
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const c of byParent.get(pid) ?? []) {
      if (c.comm === "workerd") found.push(c.pid);
      walk(c.pid);
    }
  };
  for (const r of roots) walk(r.pid);
  return found;
}

/** utime + stime of these processes, in milliseconds. */
export function cpuMs(pids: readonly number[]): number {
  const ticks = pids.reduce((sum, pid) => sum + (stat(pid)?.ticks ?? 0), 0);
  return (ticks * 1000) / ticksPerSecond();
}

/** Waits (bounded) until these processes use almost no CPU, so a measurement starts from quiet. */
export async function waitIdle(pids: readonly number[], opts = { quietMsPerSecond: 20, timeoutMs: 15_000 }): Promise<boolean> {
  const deadline = Date.now() + opts.timeoutMs;
  while (Date.now() < deadline) {
    const before = cpuMs(pids);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (cpuMs(pids) - before <= opts.quietMsPerSecond) return true;
  }
  return false;
}
