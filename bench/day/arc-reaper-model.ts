// A model of arc-reaper on the synthetic day. Decisions come from the real
// code (src/reaper/judge.ts, bench/day/fold-facts.ts and src/reaper/schedule-facts.ts, which
// are pure); the I/O around them follows src/ledger/ and src/reaper/ and is modelled:
// - webhooks reach POST /webhook WEBHOOK_LATENCY_MS after GitHub sends them;
//   LOSS_RATE of them fail (no 2xx), and GitHub lists them as failed deliveries;
// - the ledger is strongly consistent: a recorded fact is seen at once;
// - the alarm: each open runner is due when its facts say (scheduleFromFacts: the
//   grace end of a completion, else the bound); the alarm fires at the due time
//   plus a latency drawn from the samples measured under wrangler dev
//   (bench/alarm-latency.ts), one per due time (rows due together are one alarm
//   run, as gather-due.ts reads them), judges it with the real judge and deletes at once
//   (a cluster GET and DELETE, 0 GitHub calls); a "wait" is due again at its time;
// - a sweep a minute, the net: judge every open runner; every
//   DELIVERIES_EVERY_MS list the failed deliveries (status=failure) since the previous
//   listing (minus a 2-minute overlap), 100 a page, and ask redelivery of each failed
//   workflow_job/workflow_run GUID once (at most half the budget); ask GitHub
//   only about runners past the bound, or busy runners without facts for 3
//   minutes (run, then the run's jobs); delete at most 50;
// - installation tokens are minted once and cached for an hour (refreshed 5
//   minutes early); the installation id comes with the webhook payload;
// - rechecks (REAPER_RECHECK_SECONDS) grouped per run (src/reaper/recheck-runs.ts):
//   a job running past the interval with no completion heard, due at the alarm or
//   seen by a sweep, costs one read of its run's jobs (a page per 100 jobs; a job
//   read when it is the run's only open job), which answers for every open job of
//   the run: a completion becomes a fact, a running job's next recheck moves;
//   first the repository's runs in progress are listed (running-runs.ts): a run
//   listed has one page of its attempt read (REAPER_RECHECK_LISTED_RUNS=read) or
//   is answered "still running" (listing); the listing moves the next recheck of
//   every listed run's rows not due yet, and leaves rows due now to be asked;
// - conditional requests (issue 47, src/github/conditional-read.ts): every repeated GET
//   (a listing, an attempt's page, a run's jobs, a job, a run) sends the validator its
//   last 200 left, kept 2 hours (src/ledger/validators-table.ts). GitHub as the facts
//   have it: ETags are specific to the token, and a token is minted when the cached one
//   is within 5 minutes of its hour; Last-Modified is sent on none of these endpoints
//   (`lastModifiedOn`, empty by default: a counterfactual names kinds that would have it).
//   A body changes when a job of it is queued, starts or completes; a run's (and so the
//   listing's) when any of its jobs does (its updated_at: pessimistic for the listing).
//   An answer unchanged, asked with a validator that counts, is a 304: a request, not
//   counted against the hour's limit. The App's own requests (JWT) are never 304s.
import { scheduleFromFacts } from "../../src/reaper/schedule-facts.ts";
import { judge } from "../../src/reaper/judge.ts";
import type { Policy } from "../../src/model/policy.ts";
import type { GithubWord } from "../../src/model/verdict.ts";
import { trackedRunners, type TrackedRunner } from "./fold-facts.ts";
import type { Fact, JobCompleted, JobStarted, RunCompleted } from "../../src/model/facts.ts";
import { GithubCalls } from "./hourly-limit.ts";
import type { ReaperOutcome } from "./outcome.ts";
import { seededRng } from "./prng.ts";
import { SimCluster } from "./sim-cluster.ts";
import type { Trace, TraceDelivery, TraceJob } from "./trace.ts";

export const ARC_REAPER_MODEL = {
  sweepEveryMs: 60_000,
  webhookLatencyMs: 1_000,
  lossRate: 0.001,
  /** REAPER_DELIVERIES_EVERY_SECONDS: the deliveries listing runs at most this often. */
  deliveriesEveryMs: 300_000,
  /** GitHub ends a failed attempt after its 10 s timeout; the listing shows it then. */
  failedListedAfterMs: 10_000,
  listingOverlapMs: 120_000,
  lookbackMs: 3_600_000,
  deliveriesPerPage: 100,
  settleMs: 180_000, // SETTLE_MS in src/model/policy.ts
  maxCallsPerSweep: 100,
  maxDeletionsPerSweep: 50,
  tokenLifetimeMs: 3_600_000,
  tokenRefreshMarginMs: 300_000,
  /** GitHub lists at most 1,000 runs for a search filtered by status (src/reaper/running-runs.ts). */
  maxListedRunPages: 10,
  /** MAX_AGE_MS of src/ledger/validators-table.ts: a remembered answer older than this is not sent. */
  validatorMaxAgeMs: 2 * 3_600_000,
};

/** The kinds of request GitHub answers with a Last-Modified (a validator that does not depend on the token): none, by the facts. */
export const NO_LAST_MODIFIED: ReadonlySet<string> = new Set();
/** The counterfactual: every Actions read the recheck repeats would carry one. */
export const ACTIONS_LAST_MODIFIED: ReadonlySet<string> = new Set(["in-progress runs listing", "attempt jobs read", "run jobs read", "job read", "run read"]);

interface Pending {
  visibleAt: number;
  fact: Fact;
  job: number | null;
  run: number;
}

/**
 * `alarmLatencyMs`: measured delays from a due time to the alarm's delete; one is drawn per firing.
 * `listedRuns`: REAPER_RECHECK_LISTED_RUNS, how a recheck of a run listed in progress is answered.
 * `lastModifiedOn`: the kinds of request GitHub would answer with a Last-Modified (NO_LAST_MODIFIED: the facts).
 */
export function runArcReaper(
  trace: Trace,
  policy: Policy,
  horizonMs: number,
  alarmLatencyMs: readonly number[],
  listedRuns: "read" | "listing" = "read",
  lastModifiedOn: ReadonlySet<string> = NO_LAST_MODIFIED,
): ReaperOutcome {
  const m = ARC_REAPER_MODEL;
  const rng = seededRng(trace.spec.seed ^ 0x5eed);
  const cluster = new SimCluster(trace);
  const calls = new GithubCalls();
  const iso = (t: number) => new Date(trace.epoch + t).toISOString();

  const jobFacts = new Map<number, Pending[]>();
  const runFacts = new Map<number, Pending[]>();
  const closed = new Set<number>();
  const failed: { listedFrom: number; delivery: TraceDelivery }[] = [];
  const redelivered = new Set<TraceDelivery>();
  const redeliveredAt: number[] = []; // redeliveries show in the listing too
  const busyWithoutFacts = new Map<number, number>();
  let listedUntil = 0;
  let lastListingAt = -Infinity;
  const alarms = new Map<number, number>(); // job index → when the alarm judges it (due + latency)
  const latency = () => alarmLatencyMs[Math.floor(rng.next() * alarmLatencyMs.length)] ?? 0;
  // One alarm run serves every row due at its time (gather-due.ts): rows due at one time share its latency.
  const latencyAt = new Map<number, number>();
  const latencyFor = (due: number) => {
    let l = latencyAt.get(due);
    if (l === undefined) latencyAt.set(due, (l = latency()));
    return l;
  };
  let alarmFirings = 0;
  let tokenExpiresAt = -Infinity;
  const installationsKnown = new Set<string>(); // installationFor() caches per repository
  const open = new Set<number>(); // jobs with facts whose runner is not closed
  const checkedAt = new Map<number, number>(); // job index → when GitHub last answered for it (epoch ms)
  let rechecks = 0;
  let listedRechecks = 0;
  let listedReads = 0;
  let wrongDeletions = 0;
  let nextDelivery = 0;

  const record = (p: Pending) => {
    const into = p.job === null ? runFacts : jobFacts;
    const key = p.job ?? p.run;
    into.set(key, [...(into.get(key) ?? []), p]);
    if (p.job !== null && !closed.has(p.job)) open.add(p.job);
    // The ledger sets each touched open runner's due time from its facts; the alarm follows the earliest.
    const touched = p.job !== null ? [p.job] : trace.runs[p.run]!.jobs.filter((j) => open.has(j));
    for (const index of touched) schedule(index, p.visibleAt);
  };
  const schedule = (index: number, at: number) => {
    const t0 = tracked(trace.jobs[index]!, at);
    if (!t0) return;
    const next = scheduleFromFacts(t0, at, policy).next;
    const due = "at" in next ? next.at : null;
    if (due === null) return;
    const dueMs = Math.max(at, due - trace.epoch);
    alarms.set(index, dueMs + latencyFor(dueMs));
  };
  const close = (index: number) => {
    closed.add(index);
    open.delete(index);
  };
  const factOf = (d: TraceDelivery, source: string): Fact | undefined => {
    const run = trace.runs[d.run]!;
    if (d.kind === "run-completed") {
      return {
        type: "run-completed",
        repo: run.repo,
        runId: run.id,
        runAttempt: 1,
        updatedAt: iso(run.completedAt),
        conclusion: run.conclusion,
        installationId: 4242,
        source,
      } satisfies RunCompleted;
    }
    if (d.job === null || (d.kind !== "job-in_progress" && d.kind !== "job-completed")) return undefined; // answered 200 "ignored"
    const job = trace.jobs[d.job]!;
    const common = { runner: job.runner, repo: run.repo, runId: run.id, runAttempt: 1, jobId: job.id, installationId: 4242, source };
    if (d.kind === "job-in_progress") return { type: "job-started", ...common, startedAt: iso(job.startedAt) } satisfies JobStarted;
    return {
      type: "job-completed",
      ...common,
      startedAt: iso(job.startedAt),
      completedAt: iso(job.completedAt),
      conclusion: job.conclusion,
    } satisfies JobCompleted;
  };
  const deliver = (d: TraceDelivery, arrivesAt: number, source: string) => {
    const fact = factOf(d, source);
    if (fact) record({ visibleAt: arrivesAt, fact, job: d.job, run: d.run });
  };
  const visible = (list: Pending[] | undefined, t: number): Fact[] => (list ?? []).filter((p) => p.visibleAt <= t).map((p) => p.fact);
  const tracked = (job: TraceJob, t: number): TrackedRunner | undefined => {
    const facts = visible(jobFacts.get(job.index), t);
    if (facts.length === 0) return undefined;
    const folded = trackedRunners([...facts, ...visible(runFacts.get(job.run), t)])[0];
    const checked = checkedAt.get(job.index);
    return folded && checked !== undefined ? { ...folded, checkedAt: checked } : folded;
  };
  // The GitHub client mints a token only for installation calls, and caches it. A repeated GET (`body`: its
  // request and what its answer would be now) is conditional: a 304 when the remembered answer is current and
  // its validator counts (the ETag under the token that earned it, or a Last-Modified where GitHub sends one).
  let tokenId = 0;
  const remembered = new Map<string, { token: number; sig: string; at: number }>();
  const installationCall = (t: number, budget: { used: number }, kind: string, body?: { key: string; sig: string }): boolean => {
    if (tokenExpiresAt - m.tokenRefreshMarginMs <= t) {
      if (budget.used >= m.maxCallsPerSweep || !calls.take(t, "token mint")) return false;
      budget.used++;
      tokenExpiresAt = t + m.tokenLifetimeMs;
      tokenId++;
    }
    const known = body ? remembered.get(body.key) : undefined;
    const sendable = known !== undefined && t - known.at <= m.validatorMaxAgeMs && (known.token === tokenId || lastModifiedOn.has(kind));
    const notModified = sendable && known.sig === body!.sig;
    if (budget.used >= m.maxCallsPerSweep || !calls.take(t, kind, notModified)) return false;
    budget.used++;
    // A 200 replaces what is remembered; a 304 confirms it (its age starts again).
    if (body) remembered.set(body.key, notModified ? { ...known, at: t } : { token: tokenId, sig: body.sig, at: t });
    return true;
  };
  // What a body says at t, as far as its ETag goes: each job queued, started, completed.
  const jobSig = (index: number, t: number): string => {
    const j = trace.jobs[index]!;
    return `${trace.runs[j.run]!.queuedAt <= t ? 1 : 0}${j.startedAt <= t ? 1 : 0}${j.completedAt <= t ? 1 : 0}`;
  };
  const runSig = (runIndex: number, t: number): string => trace.runs[runIndex]!.jobs.map((j) => jobSig(j, t)).join("");
  // Lost completions (no completion heard when a read shows the job completed): found at the first read of
  // their run after they completed, or later.
  const lastReadOfRun = new Map<number, number>();
  const lost = { found: 0, atFirstRecheck: 0 };

  // The repository's in-progress runs (src/reaper/running-runs.ts): listed once per repository and pass,
  // 100 a page (at most 1,000 runs, GitHub's cap on a filtered search); a listed run (this attempt)
  // answers "still running" for every open job of it, whose next recheck moves. Undefined: refused.
  const listings = new Map<string, Set<number>>(); // `${repo}@${t}` → the run indexes listed
  const runsOf = new Map<string, number[]>();
  for (const run of trace.runs) runsOf.set(run.repo, [...(runsOf.get(run.repo) ?? []), run.index]);
  const firstStart = trace.runs.map((r) => Math.min(...r.jobs.map((j) => trace.jobs[j]!.startedAt)));
  const listRunning = (repo: string, t: number, budget: { used: number }): Set<number> | undefined => {
    const known = listings.get(`${repo}@${t}`);
    if (known) return known;
    const running = (runsOf.get(repo) ?? []).filter((r) => firstStart[r]! <= t && trace.runs[r]!.completedAt > t);
    const pages = Math.min(m.maxListedRunPages, Math.floor(running.length / 100) + 1);
    // Newest first: past the cap, the oldest runs are not listed (their jobs are read on their own).
    const newest = running.sort((a, b) => trace.runs[b]!.queuedAt - trace.runs[a]!.queuedAt);
    for (let p = 0; p < pages; p++) {
      const page = newest.slice(p * 100, (p + 1) * 100);
      const sig = page.map((r) => `${r}:${runSig(r, t)}`).join(",");
      if (!installationCall(t, budget, "in-progress runs listing", { key: `runs:${repo}:${p}`, sig })) return undefined;
    }
    const listed = new Set(newest.slice(0, m.maxListedRunPages * 100));
    listings.set(`${repo}@${t}`, listed);
    for (const r of listed) {
      for (const index of trace.runs[r]!.jobs) {
        // A row due in this very alarm run is asked in it (reconcile-all.ts), not answered by the listing.
        if (!open.has(index) || (alarms.get(index) ?? Infinity) <= t) continue;
        const t0 = tracked(trace.jobs[index]!, t);
        if (!t0 || t0.jobCompleted || t0.runCompleted) continue;
        checkedAt.set(index, trace.epoch + t);
        schedule(index, t);
      }
    }
    return listed;
  };
  /** A recheck at t: the repository's listing answers for a listed run; else the run's jobs are read. Undefined: refused. */
  const recheck = (runIndex: number, t: number, budget: { used: number }): "listed" | "read" | undefined => {
    const listed = listRunning(trace.runs[runIndex]!.repo, t, budget);
    if (!listed) return undefined;
    if (listed.has(runIndex) && listedRuns === "listing") {
      listedRechecks++;
      return "listed";
    }
    // A listed run (REAPER_RECHECK_LISTED_RUNS=read): one page of the attempt's jobs, not every page.
    return recheckRun(runIndex, t, budget, listed.has(runIndex)) ? "read" : undefined;
  };

  // A recheck of one run at t: one read of its jobs (a job read when it is the run's only open job)
  // answers for every open job of the run. False when the budget or the hour's limit refused it.
  const recheckRun = (runIndex: number, t: number, budget: { used: number }, listed: boolean): boolean => {
    const run = trace.runs[runIndex]!;
    const members = run.jobs.filter((j) => open.has(j));
    const kind = listed ? "attempt jobs read" : members.length > 1 ? "run jobs read" : "job read";
    const pages = listed ? 1 : members.length > 1 ? Math.ceil(run.jobs.length / 100) : 1;
    const body = kind === "job read" ? { key: `job:${members[0]}`, sig: jobSig(members[0]!, t) } : { key: `${kind}:${runIndex}`, sig: runSig(runIndex, t) };
    for (let p = 0; p < pages; p++) if (!installationCall(t, budget, kind, { key: `${body.key}:${p}`, sig: body.sig })) return false;
    if (listed) listedReads++;
    else rechecks++;
    const previousRead = lastReadOfRun.get(runIndex);
    lastReadOfRun.set(runIndex, t);
    for (const index of members) {
      const job = trace.jobs[index]!;
      if (job.completedAt <= t) {
        if (!tracked(job, t)?.jobCompleted) {
          lost.found++;
          if (previousRead === undefined || previousRead < job.completedAt) lost.atFirstRecheck++;
        }
        record({
          visibleAt: t,
          fact: {
            type: "job-completed",
            runner: job.runner,
            repo: run.repo,
            runId: run.id,
            runAttempt: 1,
            jobId: job.id,
            installationId: 4242,
            source: "rest",
            startedAt: iso(job.startedAt),
            completedAt: iso(job.completedAt),
            conclusion: job.conclusion,
          },
          job: index,
          run: runIndex,
        });
      } else {
        checkedAt.set(index, trace.epoch + t);
        schedule(index, t);
      }
    }
    return true;
  };
  // A listed run's word is the run's (src/reaper/run-listing.ts); a read's is the job's own.
  const githubWord = (job: TraceJob, t: number, how: "listed" | "read"): GithubWord =>
    how === "listed"
      ? { kind: "run-running", runId: trace.runs[job.run]!.id, runAttempt: 1 }
      : job.completedAt <= t
        ? { kind: "job", status: "completed", conclusion: job.conclusion, completedAt: iso(job.completedAt) }
        : { kind: "job", status: "in_progress", conclusion: null, completedAt: null };

  // The alarm at time a: judge each runner due by then, in order; delete at once, close the gone, re-arm a wait.
  const fireAlarms = (until: number) => {
    for (;;) {
      let next: [number, number] | undefined;
      for (const e of alarms) if (e[1] <= until && (!next || e[1] < next[1])) next = e;
      if (!next) return;
      const [index, a] = next;
      alarms.delete(index);
      if (closed.has(index)) continue;
      const job = trace.jobs[index]!;
      const t0 = tracked(job, a);
      if (!t0) continue;
      alarmFirings++;
      const view = cluster.exists(job, a) ? { kind: "found" as const, runner: cluster.runner(job) } : { kind: "missing" as const };
      let verdict = judge({ tracked: t0, cluster: view, now: trace.epoch + a, policy });
      if (verdict.askGithub && verdict.recheck && view.kind === "found") {
        const how = recheck(job.run, a, { used: 0 });
        if (!how) {
          alarms.set(index, a + 60_000); // the window frees within a minute
          continue;
        }
        if (how === "listed") checkedAt.set(index, trace.epoch + a);
        verdict = judge({ tracked: { ...t0, checkedAt: trace.epoch + a }, cluster: view, github: githubWord(job, a, how), now: trace.epoch + a, policy });
        if (closed.has(index)) continue;
      }
      if (verdict.verdict === "gone") close(index);
      else if (verdict.verdict === "delete" && view.kind === "found") {
        if (job.completedAt > a && verdict.cause !== "over-bound") wrongDeletions++;
        cluster.delete(job, a);
        close(index);
      } else if (verdict.dueAt) alarms.set(index, verdict.dueAt - trace.epoch + latencyFor(verdict.dueAt - trace.epoch));
    }
  };

  for (let t = m.sweepEveryMs; t <= horizonMs; t += m.sweepEveryMs) {
    // Webhooks GitHub sent since the last sweep, each recorded when it arrives, with the alarms in between.
    for (; nextDelivery < trace.deliveries.length && trace.deliveries[nextDelivery]!.at <= t; nextDelivery++) {
      const d = trace.deliveries[nextDelivery]!;
      fireAlarms(d.at + m.webhookLatencyMs);
      if (rng.next() < m.lossRate) failed.push({ listedFrom: d.at + m.failedListedAfterMs, delivery: d });
      else deliver(d, d.at + m.webhookLatencyMs, "webhook");
    }
    fireAlarms(t);

    // Judge what the facts and the cluster say (the open rows, one cluster list).
    const busy = cluster.busyAt(t);
    const cases: { job: TraceJob; tracked?: TrackedRunner; verdict: ReturnType<typeof judge> }[] = [];
    const withFacts = new Set<number>();
    for (const index of open) {
      const job = trace.jobs[index]!;
      const t0 = tracked(job, t);
      if (!t0) continue;
      withFacts.add(index);
      const view = cluster.exists(job, t) ? { kind: "found" as const, runner: cluster.runner(job) } : { kind: "missing" as const };
      cases.push({ job, tracked: t0, verdict: judge({ tracked: t0, cluster: view, now: trace.epoch + t, policy }) });
    }
    const stillBusy = new Map<number, number>();
    for (const job of busy) {
      if (withFacts.has(job.index) || closed.has(job.index)) continue;
      const since = busyWithoutFacts.get(job.index) ?? t;
      stillBusy.set(job.index, since);
      let verdict = judge({ cluster: { kind: "found", runner: cluster.runner(job) }, now: trace.epoch + t, policy });
      if (verdict.askGithub && t - since < m.settleMs) verdict = { code: "AwaitingWebhook", verdict: "keep", reason: "settling" };
      cases.push({ job, verdict });
    }
    busyWithoutFacts.clear();
    for (const [k, v] of stillBusy) busyWithoutFacts.set(k, v);

    // Redelivery: list what the previous listing did not cover, then ask for each failed GUID.
    const budget = { used: 0 };
    const listing = t - lastListingAt >= m.deliveriesEveryMs;
    if (listing) lastListingAt = t;
    const since = Math.max(t - m.lookbackMs, listedUntil - m.listingOverlapMs);
    // status=failure: only the failed attempts are listed (the redeliveries here succeed, so they are not).
    const listed = failed.filter((f) => f.listedFrom <= t && f.delivery.at >= since).length;
    const pages = listing ? Math.floor(listed / m.deliveriesPerPage) + 1 : 0; // the page with an older delivery ends the listing
    let listedAll = listing;
    for (let p = 0; p < pages; p++) {
      if (budget.used >= m.maxCallsPerSweep || !calls.take(t, "deliveries listing")) {
        listedAll = false;
        break;
      }
      budget.used++;
    }
    if (listedAll) {
      for (const f of failed) {
        if (redelivered.has(f.delivery) || f.listedFrom > t || f.delivery.at < since) continue;
        if (budget.used >= Math.floor(m.maxCallsPerSweep / 2)) {
          listedAll = false;
          break;
        }
        if (!calls.take(t, "redelivery")) {
          listedAll = false;
          break;
        }
        budget.used++;
        redelivered.add(f.delivery);
        redeliveredAt.push(t);
        deliver(f.delivery, t + m.webhookLatencyMs, "redelivery");
      }
    }
    if (listedAll) listedUntil = t;

    // GitHub, only for what the judge asked about: oldest first, within the budget.
    const readNow = new Map<number, "listed" | "read">(); // runs rechecked in this sweep, and how
    for (const c of cases.filter((x) => x.verdict.askGithub).sort((a, b) => a.job.startedAt - b.job.startedAt)) {
      const run = trace.runs[c.job.run]!;
      const now = trace.epoch + t;
      if (c.tracked) {
        let how = readNow.get(c.job.run);
        if (!how) {
          how = recheck(c.job.run, t, budget);
          if (!how) break;
          readNow.set(c.job.run, how);
        }
        c.verdict = judge({
          tracked: { ...c.tracked, checkedAt: now },
          cluster: { kind: "found", runner: cluster.runner(c.job) },
          github: githubWord(c.job, t, how),
          now,
          policy,
        });
        continue;
      }
      // Reconcile (learnFromGithub): the installation (once), the run, then the run's jobs.
      if (!installationsKnown.has(run.repo)) {
        if (budget.used >= m.maxCallsPerSweep || !calls.take(t, "installation look-up")) break;
        budget.used++;
        installationsKnown.add(run.repo);
      }
      if (!installationCall(t, budget, "run read", { key: `run:${c.job.run}`, sig: `${run.completedAt <= t ? 1 : 0}${runSig(c.job.run, t)}` })) break;
      const learned: Fact[] = [];
      const common = { runner: c.job.runner, repo: run.repo, runId: run.id, runAttempt: 1, installationId: 4242, source: "rest" };
      if (run.completedAt <= t) {
        learned.push(
          {
            type: "run-completed",
            repo: run.repo,
            runId: run.id,
            runAttempt: 1,
            updatedAt: iso(run.completedAt),
            conclusion: run.conclusion,
            installationId: 4242,
            source: "rest",
          },
          { type: "job-started", ...common, jobId: 0, startedAt: iso(c.job.startedAt - 5_000) },
        );
      } else {
        if (!installationCall(t, budget, "run jobs read", { key: `run jobs read:${c.job.run}:0`, sig: runSig(c.job.run, t) })) break;
        learned.push(
          c.job.completedAt <= t
            ? {
                type: "job-completed",
                ...common,
                jobId: c.job.id,
                startedAt: iso(c.job.startedAt),
                completedAt: iso(c.job.completedAt),
                conclusion: c.job.conclusion,
              }
            : { type: "job-started", ...common, jobId: c.job.id, startedAt: iso(c.job.startedAt) },
        );
      }
      for (const fact of learned) {
        record({ visibleAt: t, fact, job: fact.type === "run-completed" ? null : c.job.index, run: c.job.run });
      }
      const t1 = trackedRunners(learned)[0]!;
      c.tracked = t1;
      c.verdict = judge({ tracked: t1, cluster: { kind: "found", runner: cluster.runner(c.job) }, now, policy });
    }

    // Reap, at most the cap; close the facts of what was reaped or is gone.
    let attempted = 0;
    for (const c of cases) {
      if (c.verdict.verdict === "gone") close(c.job.index);
      if (c.verdict.verdict !== "delete" || !cluster.exists(c.job, t)) continue;
      if (attempted++ >= m.maxDeletionsPerSweep) continue;
      if (c.job.completedAt > t && c.verdict.cause !== "over-bound") wrongDeletions++;
      cluster.delete(c.job, t);
      close(c.job.index);
    }
  }

  return {
    name: "arc-reaper",
    calls,
    delays: trace.jobs.flatMap((j) => (j.stuck === null ? [] : [{ job: j.index, stuck: j.stuck, delayMs: delayOf(cluster, j) }])),
    wrongDeletions,
    alarmFirings,
    rechecks,
    listedRechecks,
    listedReads,
    lostCompletions: lost,
  };
}

function delayOf(cluster: SimCluster, job: TraceJob): number | null {
  const at = cluster.deletedAt.get(job.index);
  return at === undefined ? null : at - job.completedAt;
}
