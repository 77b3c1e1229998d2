// The agent's memory with a large fleet: the heap its view (src/agent/runner-view.ts)
// takes after a full list of N runners through the agent's own list
// (src/agent/kube-runners.ts, client-node against a page server on 127.0.0.1),
// beside the heap the same runners take as the parsed objects the API server
// sends (pod template, managedFields and all). The objects are the Kubernetes
// stand-in's (test/standins/kube: makeEphemeralRunner, managedFieldsOf), four in
// five busy, one idle; 500 a page as the agent asks. The heap is read in a child
// process under --expose-gc (this one serves the pages), after two full GCs.
//   node bench/agent-memory.ts [runners] [--quick]   (quick: the view's heap alone, one list)
import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { type KubeRunners, kubeRunners } from "../src/agent/kube-runners.ts";
import { RunnerView } from "../src/agent/runner-view.ts";
import { GROUP, PAGE_SIZE, PLURAL, VERSION } from "../src/cluster/ephemeral-runner.ts";
import { withoutManagedFields } from "../src/cluster/without-managed-fields.ts";
import { makeEphemeralRunner } from "../test/standins/kube/control.ts";
import { managedFieldsOf } from "../test/standins/kube/managed-fields.ts";
import type { JsonObject } from "../test/standins/kube/types.ts";

export const AGENT_MEMORY_RUNNERS = 50_000;
const NAMESPACE = "arc-runners";
/** A small namespace listed first, so that what the first list loads for good is not counted as the view's. */
const WARM_UP = "warm-up";
const WARM_UP_RUNNERS = PAGE_SIZE;
const LIST_RUNS = 3;
const PARSE_ROUNDS = 6;

export interface AgentMemory {
  runners: number;
  /** Mean JSON bytes of one object as listed, and of it without managedFields. */
  objectBytes: number;
  objectBytesWithoutManagedFields: number;
  /** Heap per runner held as the parsed objects of the list. */
  rawBytesPerRunner?: number;
  /** Heap per runner of the agent's view after its list (the AgentRunners, the view's maps). */
  keptBytesPerRunner: number;
  /** The agent's list of every runner (client-node, its reading into AgentRunners): median wall and CPU of LIST_RUNS. */
  listMs: number;
  listCpuMs?: number;
  /** JSON.parse of every page's text whole, and cut first without managedFields (without-managed-fields.ts): CPU ms. */
  parseWholeMs?: number;
  parseCutMs?: number;
  /** The heap of one parsed page of 500 (what the list holds at a time), whole and without managedFields. */
  pageHeapBytes?: number;
  pageHeapBytesWithoutManagedFields?: number;
}

/** Runner `i` as the API server lists it: the stand-in's object, with what the server adds on create. */
function listedRunner(i: number, created: string): JsonObject {
  const name = `arc-runners-x7k2p-runner-${i.toString(36).padStart(5, "0")}`;
  const busy = i % 5 !== 0;
  const r = makeEphemeralRunner({
    namespace: NAMESPACE,
    scaleSet: "arc-runners",
    ephemeralRunnerSetName: "arc-runners-x7k2p",
    name,
    ...(busy ? { workflowRunId: 17_000_000_000 + i, jobRepositoryName: "octo-organization/a-rather-long-repository-name" } : {}),
  }) as unknown as JsonObject;
  const meta = {
    ...(r["metadata"] as JsonObject),
    uid: `0b7e6f3c-${(i % 65536).toString(16).padStart(4, "0")}-4d0e-9a51-${i.toString(16).padStart(12, "0")}`,
    creationTimestamp: created,
    finalizers: ["ephemeralrunner.actions.github.com/finalizer", "ephemeralrunner.actions.github.com/runner-registration-finalizer"],
    generation: 1,
    resourceVersion: String(1000 + i),
  };
  const obj = { ...r, metadata: meta };
  return { ...obj, metadata: { ...meta, managedFields: managedFieldsOf(obj, created) } };
}

/** Every page's JSON text, as the API server sends it to a list of `limit=500`. */
function pagesOf(count: number, namespace: string): string[] {
  const created = "2026-12-01T10:00:00Z";
  const pages: string[] = [];
  for (let start = 0; start < count; start += PAGE_SIZE) {
    const items = [];
    for (let i = start; i < Math.min(count, start + PAGE_SIZE); i++) {
      const o = listedRunner(i, created);
      (o["metadata"] as JsonObject)["namespace"] = namespace;
      items.push(o);
    }
    const next = start + PAGE_SIZE < count ? String(start + PAGE_SIZE) : undefined;
    const metadata = { resourceVersion: "987654", ...(next ? { continue: next } : {}) };
    pages.push(JSON.stringify({ apiVersion: `${GROUP}/${VERSION}`, items, kind: "EphemeralRunnerList", metadata }));
  }
  return pages;
}

/** A list endpoint for two namespaces on 127.0.0.1: `continue` is the index of the page's first item. */
async function servePages(pages: Record<string, string[]>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const m = new RegExp(`^/apis/${GROUP}/${VERSION}/namespaces/([^/]+)/${PLURAL}$`).exec(url.pathname);
    const list = m ? pages[decodeURIComponent(m[1] ?? "")] : undefined;
    const page = list?.[Number(url.searchParams.get("continue") ?? "0") / PAGE_SIZE];
    if (page === undefined) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ kind: "Status", code: 404, message: "not here" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(page);
  });
  // The child computes for seconds between lists: an idle connection must not be closed under it.
  server.keepAliveTimeout = 10 * 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** In the child (--expose-gc): the heap after two full GCs. */
function heapNow(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("bench/agent-memory.ts --measure runs under node --expose-gc");
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Every page's text of the namespace, or none kept when `each` takes them one by one. */
async function fetchPages(url: string, namespace: string, each?: (text: string) => void): Promise<string[]> {
  const texts: string[] = [];
  let cont: string | undefined;
  do {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE), ...(cont ? { continue: cont } : {}) });
    const res = await fetch(`${url}/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${PLURAL}?${q}`);
    const text = await res.text();
    if (each) each(text);
    else texts.push(text);
    cont = /"continue":"(\d+)"/.exec(text.slice(-200))?.[1];
  } while (cont !== undefined);
  return texts;
}

const cpuMsSince = (start: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
};

/**
 * JSON.parse of every page, whole and cut first (without-managed-fields.ts, as direct mode parses its
 * pages), each page held until the next is parsed as the list holds it: CPU ms, the median of
 * PARSE_ROUNDS rounds in alternating order (what runs first pays for the other's garbage).
 */
function parseCosts(texts: string[]): { parseWholeMs: number; parseCutMs: number } {
  const whole: number[] = [];
  const cut: number[] = [];
  const parseAll = (read: (text: string) => unknown): number => {
    const c0 = process.cpuUsage();
    let page: unknown;
    for (const t of texts) page = read(t);
    void page;
    return cpuMsSince(c0);
  };
  for (let round = 0; round < PARSE_ROUNDS; round++) {
    for (const cutFirst of round % 2 === 0 ? [false, true] : [true, false]) {
      if (cutFirst) cut.push(parseAll((t) => JSON.parse(withoutManagedFields(t))));
      else whole.push(parseAll((t) => JSON.parse(t)));
    }
  }
  return { parseWholeMs: median(whole), parseCutMs: median(cut) };
}

/** The heap one parsed page takes while the list reads it, whole and cut. */
function pageHeaps(text: string): { pageHeapBytes: number; pageHeapBytesWithoutManagedFields: number } {
  const held = (read: () => unknown): number => {
    const before = heapNow();
    const page = read();
    const bytes = heapNow() - before;
    void page;
    return bytes;
  };
  return { pageHeapBytes: held(() => JSON.parse(text)), pageHeapBytesWithoutManagedFields: held(() => JSON.parse(withoutManagedFields(text))) };
}

/**
 * One list of the namespace into the view, replacing it whole as a relist does. Its own frame, so that
 * nothing but the view holds the list once it returns.
 */
async function listInto(view: RunnerView, kube: KubeRunners, runners: number): Promise<{ wallMs: number; cpuMs: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const list = await kube.list(NAMESPACE);
  const cpuMs = cpuMsSince(c0);
  const wallMs = performance.now() - t0;
  if (list.runners.length !== runners) throw new Error(`listed ${list.runners.length} runners, not ${runners}`);
  view.replace(NAMESPACE, list.runners);
  return { wallMs, cpuMs };
}

/** The child's measurement against the page server at `url`. */
async function measureHere(url: string, runners: number, quick: boolean): Promise<AgentMemory> {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "bench", server: url, skipTLSVerify: true }],
    users: [{ name: "agent", token: "bench-token" }],
    contexts: [{ name: "bench", cluster: "bench", user: "agent" }],
    currentContext: "bench",
  });
  const kube = kubeRunners(kc, () => {});
  const view = new RunnerView([WARM_UP, NAMESPACE]);
  view.replace(WARM_UP, (await kube.list(WARM_UP)).runners);

  const walls: number[] = [];
  const cpus: number[] = [];
  for (let run = 0; run < (quick ? 1 : LIST_RUNS); run++) {
    const t = await listInto(view, kube, runners);
    walls.push(t.wallMs);
    cpus.push(t.cpuMs);
  }
  if (view.size() !== runners + WARM_UP_RUNNERS) throw new Error(`the view holds ${view.size()} runners`);
  // The view's share: the heap with its runners less the heap once they are let go (the code the lists compiled stays in both).
  const withView = heapNow();
  view.replace(NAMESPACE, []);
  const kept = withView - heapNow();
  const out: AgentMemory = {
    runners,
    objectBytes: 0,
    objectBytesWithoutManagedFields: 0,
    keptBytesPerRunner: kept / runners,
    listMs: median(walls),
  };
  if (quick) return out;
  out.listCpuMs = median(cpus);

  let texts: string[] | undefined = await fetchPages(url, NAMESPACE);
  out.objectBytes = texts.reduce((s, t) => s + Buffer.byteLength(t), 0) / runners;
  out.objectBytesWithoutManagedFields = texts.reduce((s, t) => s + Buffer.byteLength(withoutManagedFields(t)), 0) / runners;
  Object.assign(out, parseCosts(texts));
  Object.assign(out, pageHeaps(texts[0] ?? ""));
  texts = undefined;

  // The same runners held as the objects the API server sent, each page's text let go once parsed.
  const before = heapNow();
  const raw: unknown[] = [];
  await fetchPages(url, NAMESPACE, (text) => raw.push(...(JSON.parse(text) as { items: unknown[] }).items));
  out.rawBytesPerRunner = (heapNow() - before) / raw.length;
  raw.length = 0;
  return out;
}

/** Serves the pages here and measures in a child node under --expose-gc. */
export async function measureAgentMemory(runners = AGENT_MEMORY_RUNNERS, opts: { quick?: boolean } = {}): Promise<AgentMemory> {
  const { url, server } = await servePages({ [WARM_UP]: pagesOf(WARM_UP_RUNNERS, WARM_UP), [NAMESPACE]: pagesOf(runners, NAMESPACE) });
  try {
    const args = ["--expose-gc", import.meta.filename, "--measure", url, String(runners), ...(opts.quick ? ["--quick"] : [])];
    const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 20, timeout: 10 * 60_000 });
    return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as AgentMemory;
  } finally {
    server.close();
  }
}

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const seconds = (ms: number | undefined): string => `${((ms ?? 0) / 1000).toFixed(2)} s`;

export function agentMemoryLine(m: AgentMemory): string {
  const kept = `the agent's view of ${m.runners.toLocaleString("en-US")} runners after its list: ${Math.round(m.keptBytesPerRunner)} bytes of heap a runner (${mib(m.keptBytesPerRunner * m.runners)})`;
  if (m.rawBytesPerRunner === undefined) return `${kept}; list ${seconds(m.listMs)}`;
  return (
    `${kept}, against ${kib(m.rawBytesPerRunner)} a runner held as the parsed objects (${mib(m.rawBytesPerRunner * m.runners)}; ` +
    `${kib(m.objectBytes)} of JSON each, ${kib(m.objectBytesWithoutManagedFields)} without managedFields). The list: ${seconds(m.listMs)}, ` +
    `${seconds(m.listCpuMs)} of the agent's CPU; one page parsed holds ${mib(m.pageHeapBytes ?? 0)} (${mib(m.pageHeapBytesWithoutManagedFields ?? 0)} without managedFields); ` +
    `every page's JSON.parse ${seconds(m.parseWholeMs)} whole, ${seconds(m.parseCutMs)} cut first`
  );
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const quick = args.includes("--quick");
  const numbers = args.filter((a) => !a.startsWith("--"));
  if (args[0] === "--measure") {
    const [url, n] = numbers;
    process.stdout.write(`${JSON.stringify(await measureHere(url ?? "", Number(n), quick))}\n`);
  } else {
    const m = await measureAgentMemory(Number(numbers[0] ?? AGENT_MEMORY_RUNNERS), { quick });
    process.stdout.write(`${agentMemoryLine(m)}\n${JSON.stringify(m)}\n`);
  }
}
