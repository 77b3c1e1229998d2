// The fleet's audit (fleet.ts), after every alarm and sweep: each DELETE against what a correct
// reaper may delete at that moment (and whether the API server, not Access, answered it), each
// finalizer patch against GitHub's word, each runner closed as gone against the cluster, each GitHub
// call against the back-off, and the unseen rows the ledger held: what happened, not what was planned.
import { runInDurableObject } from "cloudflare:test";
import type { FleetPlan } from "./fleet-plan.ts";
import { OTHER_NS, type FleetOptions, type Runner } from "./fleet-types.ts";
import { NS, type Stack } from "./stack.ts";
import { ledgerOf } from "./worker.ts";

export class FleetAudit {
  mostGithubCalls = 0;
  githubCallsForExplained = 0;
  /** GitHub answered 403 or 429 at some point: the fleet then moves the ledger's back-off with simulated time. */
  backOffSeen = false;
  callsDuringBackOff = 0;
  /** Simulated time until which GitHub asked to wait (a 403 secondary limit: a minute). */
  blockedUntil = 0;
  secondaryLimits = 0;
  accessAnsweredDeletes = 0;
  /** List answers a broken proxy changed (issue 46): Table rows cut short or mistyped, pages cut with more said to come. */
  malformedTables = 0;
  shortPages = 0;
  deletedTwice = 0;
  failedDeletedTwice = 0;
  /** When each uid was deleted (simulated). */
  readonly deletedAt = new Map<string, number>();
  busyDeleted = 0;
  failedDeletedEarly = 0;
  readonly wrongful: string[] = [];
  patches = 0;
  finalizersRemovedWhileRunning = 0;
  readonly whileRunning: string[] = [];
  /** Uids whose held deletion the reaper finished. */
  readonly finished = new Set<string>();
  readonly goneWrongly: string[] = [];
  goneRightly = 0;
  /** Uids the ledger held as unseen rows at any audit (what the run observed, not what was planned). */
  readonly heldUnseen = new Set<string>();

  private readonly s: Stack;
  private readonly o: FleetOptions;
  private readonly p: FleetPlan;
  /** ARC's controller (finalize()) lets every deletion go but the held kinds'. */
  private readonly holds: (r: Runner) => boolean;

  constructor(s: Stack, o: FleetOptions, p: FleetPlan, holds: (r: Runner) => boolean) {
    this.s = s;
    this.o = o;
    this.p = p;
    this.holds = holds;
  }

  /** What the stand-ins recorded since the last audit, at simulated time `at` of sweep k's `what` (alarm or sweep). */
  async after(at: number, what: string, k: number): Promise<void> {
    const githubCalls = await this.s.github.calls();
    this.mostGithubCalls = Math.max(this.mostGithubCalls, githubCalls.length);
    for (const c of githubCalls) {
      // Asked about as an unseen runner: its run, or the run's jobs. A recheck of its attempt's jobs, once its job ran past
      // REAPER_RECHECK_SECONDS (REAPER_RECHECK_LISTED_RUNS=read), is the tracked job's own recheck, not such an ask.
      if ([...this.p.explainedRuns].some((run) => c.path.includes(`/runs/${run}`) && !c.path.includes(`/runs/${run}/attempts/`)))
        this.githubCallsForExplained++;
      if (c.status === 403 || c.status === 429) this.backOffSeen = true;
      if (c.auth !== "installation") continue;
      if (at < this.blockedUntil) this.callsDuringBackOff++;
      if (c.status === 403) {
        this.secondaryLimits++;
        this.blockedUntil = Math.max(this.blockedUntil, at + 60_000);
      }
    }
    const objects = new Map(this.p.runners.filter((r) => r.uid).map((r) => [r.uid!, r]));
    for (const c of await this.s.kube.calls()) {
      if (c.mangled === "cut-page") this.shortPages++;
      else if (c.mangled) this.malformedTables++;
      if (c.method !== "DELETE" || c.status !== 200) continue;
      const name = c.path.split("/").pop()!;
      const namespace = /\/namespaces\/([^/]+)\//.exec(c.path)?.[1] ?? NS;
      const uid = (c.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;
      // While Access faults may answer (up to the sweep that clears them), check that the API server deleted it.
      const now = k <= this.o.faultSweeps ? await this.s.kube.get(namespace, name) : undefined;
      if (now && now.metadata.uid === uid && !now.metadata.deletionTimestamp) {
        this.accessAnsweredDeletes++; // a 200 from Access, not the API server: nothing was deleted
        continue;
      }
      const r = uid ? objects.get(uid) : undefined;
      if (uid && this.deletedAt.has(uid)) {
        this.deletedTwice++;
        if (r?.kind === "failed") this.failedDeletedTwice++;
      }
      if (uid) this.deletedAt.set(uid, at);
      if (r && r.deletableFrom === undefined && r.object.status?.workflowRunId !== undefined) this.busyDeleted++;
      if (r?.kind === "failed" && at < r.deletableFrom!) this.failedDeletedEarly++;
      if (!r || r.deletableFrom === undefined || at < r.deletableFrom) this.wrongful.push(`${name} (${r?.kind ?? "unknown"}, uid ${uid}) at ${what} ${k}`);
    }
    // Every finalizer patch, against what GitHub's REST answer said of the job at that moment.
    for (const c of await this.s.kube.calls()) {
      if (c.method !== "PATCH" || c.path.endsWith("/status")) continue;
      this.patches++;
      if (c.status !== 200) continue;
      const name = c.path.split("/").pop()!;
      const r = this.p.runners.find((x) => x.name === name && this.holds(x));
      const jobRuns = !r || r.kind === "hung" || k < r.completesAtSweep!;
      if (jobRuns) {
        this.finalizersRemovedWhileRunning++;
        this.whileRunning.push(`${name} (${r?.kind ?? "unknown"}) at ${what} ${k}`);
      } else this.finished.add(r.uid!);
    }
    // Every runner closed as gone now: was the object that took its job still in the cluster?
    const gone = await runInDurableObject(ledgerOf(this.s.env), (_i, state) =>
      state.storage.sql
        .exec<{ runner: string; job_id: number; run_id: number; uid: string | null; reason: string }>(
          "SELECT runner, job_id, run_id, uid, reason FROM runners WHERE state = 'gone' AND decided_at = ?",
          at,
        )
        .toArray(),
    );
    for (const g of gone) {
      const owner = g.uid ?? (g.job_id === 0 ? this.p.owners.get(`${g.runner}#run${g.run_id}`) : this.p.owners.get(`${g.runner}#${g.job_id}`))?.uid;
      const inCluster = [await this.s.kube.get(NS, g.runner), await this.s.kube.get(OTHER_NS, g.runner)];
      if (owner !== undefined && inCluster.some((o) => o?.metadata.uid === owner))
        this.goneWrongly.push(`${g.runner} job ${g.job_id} at ${what} ${k}: ${g.reason}`);
      else this.goneRightly++;
    }
    const unseenNow = await runInDurableObject(ledgerOf(this.s.env), (_i, state) =>
      state.storage.sql.exec<{ uid: string }>("SELECT uid FROM unseen").toArray(),
    );
    for (const u of unseenNow) this.heldUnseen.add(u.uid);
    await this.s.github.clearCalls();
    await this.s.kube.clearCalls();
  }

  /** What happened to the unseen runners, from the ledger's own tables at the end. */
  async unseen(): Promise<{ unseenVanished: number; unseenVanishedEnded: number; unseenExplained: number }> {
    const { unseenLeft, tracked } = await runInDurableObject(ledgerOf(this.s.env), (_i, state) => ({
      unseenLeft: new Set(
        state.storage.sql
          .exec<{ uid: string }>("SELECT uid FROM unseen")
          .toArray()
          .map((u) => u.uid),
      ),
      tracked: new Set(
        state.storage.sql
          .exec<{ runner: string; run_id: number }>("SELECT runner, run_id FROM runners")
          .toArray()
          .map((t) => `${t.runner}#${t.run_id}`),
      ),
    }));
    const endedUnseen = (r: Runner): boolean => r.uid !== undefined && this.heldUnseen.has(r.uid) && !unseenLeft.has(r.uid);
    const heldThenVanished = this.p.vanishing.filter(
      ({ r }) => r.uid !== undefined && this.heldUnseen.has(r.uid) && r.removed === true && !this.deletedAt.has(r.uid),
    );
    const unseenVanished = heldThenVanished.length;
    // The simulated clock runs a day ahead of the real one that stamps a view's as-of, so no view is ever newer than
    // first_seen: the row stays ("not newer than its last fact") instead of ending gone. Counted, not asserted.
    const unseenVanishedEnded = heldThenVanished.filter(({ r }) => endedUnseen(r)).length;
    const unseenExplained = this.p.explained.filter(({ r, runId }) => endedUnseen(r) && tracked.has(`${r.name}#${runId}`)).length;
    return { unseenVanished, unseenVanishedEnded, unseenExplained };
  }
}
