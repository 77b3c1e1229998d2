// A V8 CPU profile of the Worker under `wrangler dev`, over the inspector
// (Chrome DevTools Protocol) that wrangler exposes on --inspector-port, summed
// by function: where a sweep's CPU goes. Sampling, so small shares are noisy.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileLine {
  fn: string;
  where: string;
  /** The source module, from esbuild's "// path" comments in the bundle ("" when unknown). */
  module: string;
  selfMs: number;
  share: number;
}

/** Connects to the first Worker target of the inspector at `port` and starts sampling (every 100 µs). */
export async function startCpuProfile(port: number): Promise<{ stop(): Promise<{ totalMs: number; top: ProfileLine[] }> }> {
  // wrangler's inspector proxy sometimes leaves the first WebSocket unopened: try a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await connectAndStart(port);
    } catch (e) {
      if (attempt >= 4) throw e;
    }
  }
}

async function connectAndStart(port: number): Promise<{ stop(): Promise<{ totalMs: number; top: ProfileLine[] }> }> {
  let targets: { webSocketDebuggerUrl: string; title?: string }[] = [];
  for (let attempt = 0; ; attempt++) {
    try {
      targets = (await (await fetch(`http://127.0.0.1:${port}/json`, { signal: AbortSignal.timeout(5_000) })).json()) as typeof targets;
      break;
    } catch (e) {
      if (attempt >= 5) throw e;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  const target = targets.find((t) => t.webSocketDebuggerUrl);
  if (!target) throw new Error(`no inspector target on port ${port}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    setTimeout(() => {
      ws.terminate();
      reject(new Error("the inspector's WebSocket did not open within 10 s"));
    }, 10_000).unref();
  });
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  ws.on("message", (data: WebSocket.RawData) => {
    const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  });
  const send = (method: string, params: Record<string, unknown> = {}, timeoutMs = 10_000) =>
    new Promise<unknown>((resolve, reject) => {
      const n = ++id;
      pending.set(n, resolve);
      ws.send(JSON.stringify({ id: n, method, params }));
      setTimeout(() => reject(new Error(`the inspector did not answer ${method} within ${timeoutMs / 1000} s`)), timeoutMs).unref();
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 100 });
  await send("Profiler.start");
  return {
    async stop() {
      const { profile } = (await send("Profiler.stop", {}, 30_000)) as { profile: Profile };
      ws.close();
      if (process.env["BENCH_SAVE_PROFILE"]) writeFileSync(process.env["BENCH_SAVE_PROFILE"], JSON.stringify(profile));
      return summarise(profile);
    },
  };
}

/** Self time per function (name + file:line), largest first; idle and GC shown as V8 names them. */
export function summarise(profile: Profile): { totalMs: number; top: ProfileLine[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + (deltas[i + 1] ?? deltas[i] ?? 0));
  const modules = new Map<string, (line: number) => string>();
  const moduleOf = (url: string, line: number): string => {
    if (!modules.has(url)) modules.set(url, moduleMap(url));
    return modules.get(url)!(line);
  };
  const byFn = new Map<string, { fn: string; where: string; module: string; us: number }>();
  let busyUs = 0;
  for (const [nodeId, us] of selfUs) {
    const f = byId.get(nodeId)!.callFrame;
    if (f.functionName === "(idle)" || f.functionName === "(program)") continue;
    busyUs += us;
    const where = f.url ? `${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}:${f.columnNumber + 1}` : "";
    const key = `${f.functionName}|${where}`;
    const e = byFn.get(key) ?? { fn: f.functionName || "(anonymous)", where, module: f.url ? moduleOf(f.url, f.lineNumber) : "", us: 0 };
    e.us += us;
    byFn.set(key, e);
  }
  const top = [...byFn.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, 25)
    .map((e) => ({ fn: e.fn, where: e.where, module: e.module, selfMs: e.us / 1000, share: busyUs > 0 ? e.us / busyUs : 0 }));
  return { totalMs: busyUs / 1000, top };
}

/**
 * The bundle a profile's script URL names. workerd names it by its file name only ("entry.js"): it is
 * the newest of that name under wrangler dev's .wrangler/tmp/dev-* (read while the stack still runs).
 */
function bundlePath(url: string): string | undefined {
  if (url.startsWith("file:")) return fileURLToPath(url);
  if (isAbsolute(url)) return url;
  const tmp = join(dirname(fileURLToPath(import.meta.url)), "..", ".wrangler", "tmp");
  let dirs: string[];
  try {
    dirs = readdirSync(tmp).filter((d) => d.startsWith("dev-"));
  } catch {
    return undefined;
  }
  const found = dirs.map((d) => join(tmp, d, url)).filter((p) => existsSync(p));
  return found.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/** Line (0-based) → the module esbuild bundled there, from its "// src/x.ts" comments; "" when the bundle cannot be read. */
function moduleMap(url: string): (line: number) => string {
  let lines: string[];
  try {
    lines = readFileSync(bundlePath(url) ?? url, "utf8").split("\n");
  } catch {
    return () => "";
  }
  const starts: [number, string][] = [];
  lines.forEach((l, i) => {
    const m = /^\/\/ ((?:src|test|node_modules|\.\.?)\/\S+)$/.exec(l);
    if (m) starts.push([i, m[1]!.replace(/^.*node_modules\//, "")]);
  });
  return (line) => {
    let found = "";
    for (const [start, path] of starts) {
      if (start > line) break;
      found = path;
    }
    return found;
  };
}
