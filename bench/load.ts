// The intake load generator, run as its own process (bench/load-client.ts
// spawns it) so that its CPU is not the stand-ins' nor workerd's event loop.
// Each request is a real workflow_job.in_progress payload from
// @octokit/webhooks-examples with a fresh job id (so the product writes a new
// KV fact every time), signed like GitHub signs it. A fixed number of
// connections loop over keep-alive sockets for warm-up + duration; only
// requests that start and end inside the measured window count.
//
//   node bench/load.ts '<LoadSpec as JSON>'   → one LoadResult as JSON on stdout
import { createHmac, randomUUID } from "node:crypto";
import { Agent, request } from "node:http";
import { workflowJobPayload } from "../scripts/lib/local-stack.ts";
import { percentile } from "./stats.ts";

export interface LoadSpec {
  /** e.g. http://127.0.0.1:41234/webhook */
  url: string;
  /** X-GitHub-Event sent; default workflow_job. Another event is verified, parsed, counted and not recorded. */
  event?: string;
  secret: string;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Job ids start here, so runs against the same KV never reuse one. */
  firstJobId: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Requests sent in all, warm-up included: the next run's firstJobId must be above firstJobId + sent. */
  sent: number;
  /** Latency of each counted request (ms, 0.01 ms steps), so rounds can be pooled. */
  latenciesMs: number[];
}

// Values that appear nowhere else in the payload: replaced per request in the JSON text,
// so each body costs a string replace and an HMAC rather than a JSON.stringify.
const JOB = 9_876_543_210_123;
const RUN = 8_765_432_109_876;
const RUNNER = "arc-runners-bench-runner-placeholder";

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const template = JSON.stringify(
    workflowJobPayload("in_progress", {
      runner: RUNNER,
      repo: "octo-org/octo-repo",
      runId: RUN,
      runAttempt: 1,
      jobId: JOB,
      installationId: 4242,
      startedAt: new Date().toISOString(),
    }),
  );
  for (const marker of [String(JOB), String(RUN), RUNNER]) {
    if (template.split(marker).length !== 2) throw new Error(`load: marker ${marker} must occur exactly once in the payload`);
  }
  const url = new URL(spec.url);
  const agent = new Agent({ keepAlive: true, maxSockets: spec.concurrency });
  let next = spec.firstJobId;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let sent = 0;

  const start = performance.now();
  const windowStart = start + spec.warmupMs;
  const windowEnd = windowStart + spec.durationMs;

  const post = (): Promise<number> => {
    const job = next++;
    sent++;
    const body = template
      .replace(String(JOB), String(job))
      .replace(String(RUN), String(1_000_000 + Math.floor(job / 4)))
      .replace(RUNNER, `arc-runners-x-runner-${job}`);
    const signature = `sha256=${createHmac("sha256", spec.secret).update(body).digest("hex")}`;
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: "POST",
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            "user-agent": "GitHub-Hookshot/bench",
            "x-github-event": spec.event ?? "workflow_job",
            "x-github-delivery": randomUUID(),
            "x-hub-signature-256": signature,
          },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
          res.on("error", reject);
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error("request timed out after 30 s")));
      req.on("error", reject);
      req.end(body);
    });
  };

  const connection = async (): Promise<void> => {
    while (performance.now() < windowEnd) {
      const t0 = performance.now();
      let status = 0;
      try {
        status = await post();
      } catch {
        status = 0;
      }
      const t1 = performance.now();
      if (t0 < windowStart || t1 > windowEnd) continue; // warm-up, or spilling past the window
      statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
      if (status < 200 || status >= 300) errors++;
      else latencies.push(t1 - t0);
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, connection));
  agent.destroy();

  const seconds = spec.durationMs / 1000;
  return {
    requests: latencies.length,
    errors,
    statuses,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    sent,
    latenciesMs: latencies.map((l) => Math.round(l * 100) / 100),
  };
}

if (import.meta.main) {
  const spec = JSON.parse(process.argv[2] ?? "") as LoadSpec;
  const result = await runLoad(spec);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
