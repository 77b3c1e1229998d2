// Runs bench/load.ts in a second Node process and reads its one JSON line.
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { LoadResult, LoadSpec } from "./load.ts";

const LOAD = join(import.meta.dirname, "load.ts");

export function loadFromSecondProcess(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD, JSON.stringify(spec)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    // Bounded: the run itself lasts warm-up + duration; allow a minute more for start and drain.
    const timer = setTimeout(() => child.kill("SIGKILL"), spec.warmupMs + spec.durationMs + 60_000);
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`load generator exited (${code ?? signal}): ${err.trim().slice(-2000)}`));
      try {
        resolve(JSON.parse(out.trim().split("\n").pop() ?? "") as LoadResult);
      } catch (e) {
        reject(new Error(`load generator printed no result: ${(e as Error).message}: ${out.slice(-500)} ${err.slice(-500)}`));
      }
    });
  });
}
