// The agent's snapshot of a large fleet (issue 25): the messages the agent sends
// for 50,000 live runners (src/agent/runner-view.ts snapshotMessages, the real
// split), their sizes as JSON on the WebSocket, against the 32 MiB a Durable
// Object receives in one message. Pure Node: no workerd, nothing sent.
//   node bench/snapshot-size.ts [runners]
import type { AgentRunner } from "../src/cluster/agent-protocol.ts";
import { RUNNERS_PER_PART, snapshotMessages } from "../src/agent/runner-view.ts";

export const MESSAGE_LIMIT_BYTES = 32 * 1024 * 1024;

export interface SnapshotSize {
  runners: number;
  messages: number;
  perPart: number;
  largestBytes: number;
  totalBytes: number;
  buildMs: number;
}

/** Runners as ARC names them (a scale set's prefix and a 5-letter suffix), busy on a run of a long repository name. */
export function fleetOfRunners(count: number, now = Date.now()): AgentRunner[] {
  return Array.from({ length: count }, (_, i) => ({
    namespace: `arc-runners-${String.fromCharCode(97 + (i % 12))}`,
    name: `arc-runners-${String.fromCharCode(97 + (i % 12))}-x7k2p-runner-${i.toString(36).padStart(5, "0")}`,
    uid: `0b7e6f3c-${(i % 65536).toString(16).padStart(4, "0")}-4d0e-9a51-${i.toString(16).padStart(12, "0")}`,
    creationTimestamp: new Date(now - (i % 3600) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    workflowRunId: 17_000_000_000 + i,
    jobRepositoryName: "octo-organization/a-rather-long-repository-name",
  }));
}

export function measureSnapshot(count: number): SnapshotSize {
  const runners = fleetOfRunners(count);
  const t0 = performance.now();
  const sizes = snapshotMessages(runners, "bench-snapshot").map((m) => Buffer.byteLength(JSON.stringify(m)));
  const buildMs = performance.now() - t0;
  return {
    runners: count,
    messages: sizes.length,
    perPart: RUNNERS_PER_PART,
    largestBytes: Math.max(...sizes),
    totalBytes: sizes.reduce((s, n) => s + n, 0),
    buildMs,
  };
}

if (import.meta.main) {
  const count = Number(process.argv[2] ?? 50_000);
  const s = measureSnapshot(count);
  console.log(
    `${s.runners} runners: ${s.messages} snapshot messages of at most ${s.perPart} runners; largest ${(s.largestBytes / 1024).toFixed(1)} KiB ` +
      `(${((100 * s.largestBytes) / MESSAGE_LIMIT_BYTES).toFixed(2)}% of the 32 MiB limit), ${(s.totalBytes / 1024 / 1024).toFixed(1)} MiB in all; built and serialized in ${s.buildMs.toFixed(0)} ms of Node`,
  );
}
