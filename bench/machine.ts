// What the numbers were measured on: they mean little without it.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { ROOT } from "../scripts/lib/local-stack.ts";

export interface Machine {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  wrangler: string;
  workerd: string;
  commit: string;
  date: string;
}

function packageVersion(dir: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, "node_modules", dir, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

function cpuModel(): string {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    if (line) return line.split(":")[1]!.trim();
  } catch {
    // not Linux: fall back to what Node says
  }
  return cpus()[0]?.model ?? "unknown";
}

function commit(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT }).toString().trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd: ROOT }).toString().trim() !== "";
    return dirty ? `${sha} (src/ modified)` : sha;
  } catch {
    return "unknown";
  }
}

export function describeMachine(): Machine {
  return {
    cores: cpus().length,
    cpuModel: cpuModel(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    wrangler: packageVersion("wrangler"),
    // wrangler dev runs its own copy of workerd when it pins another version.
    workerd: packageVersion("wrangler/node_modules/workerd") !== "unknown" ? packageVersion("wrangler/node_modules/workerd") : packageVersion("workerd"),
    commit: commit(),
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  };
}

/** The 1-minute load average: other work on the machine skews every timing. */
export const loadAverage = (): string => loadavg()[0]!.toFixed(2);
