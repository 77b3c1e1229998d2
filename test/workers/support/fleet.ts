// A randomized fleet of runner lifecycles driven through the real Worker: real
// payloads delivered duplicated, shuffled, or dropped (then recorded as failed
// deliveries on the stand-in GitHub, which the sweep asks to redeliver), API
// faults on both stand-ins, and many sweeps. It records what a correct reaper
// must and must not delete, and checks every deletion against it as it happens.
// Its teeth (issue 10): names that come back while their facts are open (the
// runner vanished between two sweeps and ARC made a new one of that name, idle
// or busy in the same or another run), Access-style answers (302 to a login
// page, 200 HTML, `{}`) on list, read and delete, completions lost beyond the
// look-back (only the recheck can find them), and 403 secondary rate limits.
// Besides each deletion it audits every runner closed as gone (was its object
// still in the cluster?), every GitHub call during a back-off, and whether any
// credential followed a redirect to another host.
import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { accessFaults } from "../../standins/kube/access-faults-client.ts";
import { FleetAudit } from "./fleet-audit.ts";
import { injectFaults } from "./fleet-faults.ts";
import { planFleet } from "./fleet-plan.ts";
import {
  CLOCK_STEP_SWEEP,
  FAILED_SECONDS,
  REPOINT_SWEEP,
  iso,
  OTHER_NS,
  prng,
  type Event,
  type FleetContext,
  type FleetFigures,
  type FleetOptions,
  type Runner,
} from "./fleet-types.ts";
import { jobStartedStatus } from "../../standins/kube/control.ts";
import { NS, REPO, stack, type Stack } from "./stack.ts";
import { ADMIN_TOKEN, signedDelivery, call, evictLedger, ledgerOf, report } from "./worker.ts";
import { FLEET_AGENT_TOKEN, fleetAgent, type FleetAgent, type SyncMode } from "./fleet-agent.ts";

export async function runFleet(o: FleetOptions): Promise<FleetFigures> {
  const random = prng(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  // Simulated time of the first sweep: a day ahead of the clock, so that the runtime
  // never fires the ledger's alarm on its own; the fleet runs it at simulated times.
  const S = Date.now() + 86_400_000;
  const s: Stack = await stack({
    REAPER_GRACE_SECONDS: String(o.graceSeconds),
    REAPER_MAX_JOB_SECONDS: String(o.boundSeconds),
    REAPER_MAX_GITHUB_CALLS_PER_MINUTE: String(o.githubBudget),
    REAPER_MAX_DELETIONS_PER_MINUTE: "200",
    REAPER_REDELIVERY_LOOKBACK_SECONDS: "86400",
    REAPER_RECHECK_SECONDS: String(o.recheckSeconds ?? 600),
    REAPER_NAMESPACES: `${NS},${OTHER_NS}`,
    ...(o.slots ? { REAPER_FAILED_SECONDS: String(FAILED_SECONDS), REAPER_FINISH_STUCK: "true", REAPER_STUCK_SECONDS: "120" } : {}),
    ...(o.agent ? { CLUSTER_MODE: "agent", AGENT_TOKEN: FLEET_AGENT_TOKEN, KUBE_API_URL: undefined, KUBE_TOKEN: undefined } : {}),
  });
  const access = accessFaults(s.kube);
  const grace = o.graceSeconds * 1000;
  const bound = o.boundSeconds * 1000;
  const ctx: FleetContext = { o, s, random, pick, S, grace, bound, calm: o.faultSweeps };
  const fp = await planFleet(ctx);
  const { runners, swaps, events, vanishing, late, appearing, flips, explained, latePatches } = fp;
  const calm = ctx.calm;

  for (let i = 0; i < runners.length; i += 200) {
    const batch = runners.slice(i, i + 200).filter((r) => r.uid === undefined && !swaps.some((w) => w.fresh === r) && !appearing.includes(r));
    const stored = await s.kube.seedAll(batch.map((r) => r.object));
    batch.forEach((r, j) => (r.uid = stored[j]!.metadata.uid));
  }

  // Agent mode: the agent connects once the cluster is seeded, and lags before every alarm and sweep.
  const agent: FleetAgent | undefined = o.agent ? await fleetAgent(s.env, s.kube, [NS, OTHER_NS]) : undefined;
  const agentStep = async () => {
    if (!agent) return;
    const r = random();
    const mode: SyncMode = r < 0.7 ? "watch" : r < 0.85 ? "stalled" : r < 0.95 ? "relist" : "outage";
    await agent.sync(mode);
  };

  // Deliveries: each event once, some twice, some dropped (GitHub records the failure).
  const byGuid = new Map(events.map((e) => [e.guid, e]));
  const plan: { e: Event; drop: boolean }[] = [];
  let duplicates = 0;
  let drops = 0;
  for (const e of events) {
    const drop = random() < o.dropRate;
    if (drop) drops++;
    plan.push({ e, drop });
    if (!drop && random() < o.duplicateRate) {
      duplicates++;
      plan.push({ e, drop: false });
    }
  }
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [plan[i], plan[j]] = [plan[j]!, plan[i]!];
  }
  const deliver = async (e: Event) => {
    const res = await call(s.env, await signedDelivery(e.event, e.payload, { delivery: e.guid }));
    expect(res.status, `delivery ${e.guid}`).toBe(202);
  };

  let faultsInjected = 0;
  let accessInjected = 0;
  let mostAlarmRunsInAMinute = 0;
  let clockSteps = 0;
  let alarmFailures = 0;
  /** ARC's controller (finalize()) lets every deletion go but the held kinds'. */
  const holds = (r: Runner) => o.slots === true && (r.kind === "held" || (r.kind === "hung" && Number(r.name.split("-").pop()) % (o.heldHungEvery ?? 1) === 0));
  const releasable = [...new Set(runners.filter((r) => !holds(r)).map((r) => r.name))];
  const audit = new FleetAudit(s, o, fp, holds);
  const { deletedAt, finished } = audit;
  let redelivered = 0;
  let sweeps = 0;
  let alarms = 0;
  let convergedAt = -1;
  const mustDelete = () => runners.filter((r) => r.deletableFrom !== undefined && !r.removed && r.uid !== undefined);
  // GitHub's back-off is kept on the ledger's clock (the real one); the fleet's time runs a minute a sweep.
  // Before each run the fleet moves the back-off by the simulated time that passed beyond the real time,
  // so a 403 asks for its minute of simulated time, and audits that no installation call comes within it.
  let lastRun: { sim: number; real: number } | undefined;
  const passTime = async (at: number) => {
    const real = Date.now();
    if (lastRun && audit.backOffSeen) {
      const shift = at - lastRun.sim - (real - lastRun.real);
      await runInDurableObject(ledgerOf(s.env), (_i, state) => {
        const rows = state.storage.sql.exec<{ key: string; value: string }>("SELECT key, value FROM memory WHERE key LIKE 'backoff/%'").toArray();
        for (const r of rows) state.storage.sql.exec("UPDATE memory SET value = ? WHERE key = ?", JSON.stringify(Number(JSON.parse(r.value)) - shift), r.key);
      });
    }
    lastRun = { sim: at, real };
  };

  let sweepsSkipped = 0;
  const sweepRanAt = () =>
    runInDurableObject(
      ledgerOf(s.env),
      (_i, state) => state.storage.sql.exec<{ value: string }>("SELECT value FROM memory WHERE key = 'sweep-ran-at'").toArray()[0]?.value,
    );
  for (let k = 0; k < o.maxSweeps; k++) {
    const now = S + k * 60_000;
    // This sweep's share of the deliveries, arriving before it.
    const share =
      k < o.deliverySweeps ? plan.slice(Math.floor((plan.length * k) / o.deliverySweeps), Math.floor((plan.length * (k + 1)) / o.deliverySweeps)) : [];
    for (const { e, drop } of share) {
      // GitHub attempts a delivery right after the event; here, within the minute before this sweep.
      await s.github.addDelivery({
        guid: e.guid,
        event: e.event,
        action: String(e.payload.action),
        statusCode: drop ? 502 : 202,
        deliveredAt: iso(now - Math.floor(random() * 60_000)),
      });
      if (!drop) await deliver(e);
    }
    if (k === calm && appearing.length > 0) {
      const stored = await s.kube.seedAll(appearing.map((r) => r.object));
      appearing.forEach((r, j) => (r.uid = stored[j]!.metadata.uid));
    }
    for (const l of late.filter((x) => x.k === k)) await deliver(l.e);
    for (const f of flips.filter((x) => x.k === k)) await f.complete();
    for (const l of latePatches.filter((x) => x.k === k && !x.r.removed && !deletedAt.has(x.r.uid!)))
      await s.kube.patchStatus(l.r.object.metadata.namespace, l.r.name, jobStartedStatus({ workflowRunId: l.runId, jobRepositoryName: REPO }));
    for (const v of vanishing.filter((x) => x.k === k)) {
      await s.kube.remove(v.r.object.metadata.namespace, v.r.name);
      v.r.removed = true;
    }
    // Names that come back: the old object vanishes unseen, a new one of its name appears.
    for (const w of swaps.filter((x) => x.k === k)) {
      await s.kube.remove(NS, w.old.name);
      w.old.removed = true;
      w.fresh.uid = (await s.kube.seed(w.fresh.object)).metadata.uid;
      await w.afterwards(deliver);
    }
    if (k < o.faultSweeps) {
      const injected = await injectFaults(s, access, o, k, random, pick);
      faultsInjected += injected.faults;
      accessInjected += injected.access;
    } else if (k === o.faultSweeps) {
      await s.kube.clearFaults();
      await s.github.clearFaults();
      await access.clear();
    }
    // The clock steps back two days (a stamp of the sweep clock lands past every later sweep's time), the alarm's pass
    // then fails three runs, and the clock steps forward an hour: the sweeps and alarms go on, nothing is judged wrongly.
    if (o.clockHazards && k === CLOCK_STEP_SWEEP) {
      await ledgerOf(s.env).stepClock(-2 * 86_400_000);
      clockSteps++;
    }
    if (o.clockHazards && k === CLOCK_STEP_SWEEP + 1) await ledgerOf(s.env).failAlarms(3);
    if (o.clockHazards && k === CLOCK_STEP_SWEEP + 2) {
      await ledgerOf(s.env).stepClock(3_600_000);
      clockSteps++;
    }
    if (o.repointCluster && agent && k === REPOINT_SWEEP) await agent.repoint();
    await s.github.clearCalls();
    await s.kube.clearCalls();
    // Each alarm and each sweep meets a fresh ledger instance, as a new isolate would.
    let alarmRuns = 0;
    for (const at of [now - 40_000, now - 20_000]) {
      await passTime(at);
      // An alarm runs again at once while something is still due at its time: count every run.
      await agentStep();
      for (let run = 0; run < 50; run++) {
        await evictLedger(s.env);
        const ran = await ledgerOf(s.env).alarmAt(at);
        if ("failed" in ran) alarmFailures++;
        alarms++;
        alarmRuns++;
        const next = await runInDurableObject(ledgerOf(s.env), (_i, state) => state.storage.getAlarm());
        if (next === null || next > at) break;
      }
      await audit.after(at, "alarm", k);
    }
    mostAlarmRunsInAMinute = Math.max(mostAlarmRunsInAMinute, alarmRuns);
    await passTime(now);
    await agentStep();
    await evictLedger(s.env);
    const ranBefore = await sweepRanAt();
    await s.sweep(now);
    // A sweep the ledger skipped leaves the sweep clock's stamp as it was (a stamp past its time: issue 46).
    if ((await sweepRanAt()) === ranBefore) sweepsSkipped++;
    sweeps++;
    await audit.after(now, "sweep", k);
    // ARC: deregister, then the object goes (with `slots`, not the held kinds': their finalizer waits for GitHub).
    await s.kube.finalize(o.slots ? { names: releasable } : {});
    // GitHub redelivers what the sweep asked for (replayed here, with the same GUID).
    const asked = await s.github.redeliveries();
    for (const r of asked.slice(redelivered)) {
      const e = byGuid.get(r.guid);
      if (!e) continue;
      await deliver(e);
      // GitHub lists the new attempt as it delivered it: at this (simulated) time, answered 202.
      await s.github.addDelivery({ guid: e.guid, event: e.event, action: String(e.payload.action), statusCode: 202, deliveredAt: iso(now), redelivery: true });
    }
    redelivered = asked.length;
    // Converged: faults over, every delivery made, every dropped one redelivered, every finished runner deleted.
    if (
      // ...and the unseen teeth played out: vanished, or their late webhook delivered and a sweep after it.
      k >= Math.max(o.faultSweeps, o.deliverySweeps, ...swaps.map((w) => w.k), ...vanishing.map((v) => v.k + 1), ...late.map((l) => l.k + 1)) &&
      redelivered >= drops &&
      mustDelete().every((r) => deletedAt.has(r.uid!)) &&
      runners.every((r) => r.kind !== "held" || finished.has(r.uid!))
    ) {
      convergedAt = k;
      break;
    }
  }
  const finalNow = S + (sweeps - 1) * 60_000;
  const asks = new Map<string, number>();
  for (const r of await s.github.redeliveries()) asks.set(r.guid, (asks.get(r.guid) ?? 0) + 1);
  const askedTwice = [...asks].filter(([, n]) => n > 1).map(([guid]) => guid);
  if (askedTwice.length > 0) await report(`redelivery asked more than once for: ${askedTwice.slice(0, 5).join(", ")}`);
  const { unseenVanished, unseenVanishedEnded, unseenExplained } = await audit.unseen();
  const leftBehind = mustDelete().filter((r) => !deletedAt.has(r.uid!) && r.deletableFrom! <= finalNow - 60_000);
  const sink = await access.sink();
  // What the ledger saw of the re-pointed name (not what was planned): each change of identity it counted.
  const metrics = await (await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))).text();
  const identityChanges = metrics
    .split("\n")
    .filter((l) => l.startsWith("arc_reaper_cluster_identity_changes_total{"))
    .reduce((n, l) => n + Number(l.split(" ").pop()), 0);
  const credentialsToOtherHosts = sink.calls.filter((c) => c.credentials).length;
  if (audit.wrongful.length > 0) console.error("audit.wrongful deletions:", audit.wrongful.slice(0, 10));
  if (audit.whileRunning.length > 0) console.error("finalizers removed while GitHub said the job runs:", audit.whileRunning.slice(0, 10));
  if (audit.goneWrongly.length > 0) await report(`closed as gone while in the cluster: ${audit.goneWrongly.slice(0, 10).join("; ")}`);
  if (leftBehind.length > 0)
    console.error(
      "left behind:",
      leftBehind.slice(0, 10).map((r) => `${r.name} (${r.kind}) due ${iso(r.deletableFrom!)}`),
    );

  return {
    seed: o.seed,
    lifecycles: o.lifecycles,
    runners: runners.length,
    events: events.length,
    deliveries: plan.length,
    duplicates,
    drops,
    redelivered,
    faultsInjected,
    sweeps,
    alarms,
    nameReuses: swaps.length,
    lostCompletions: runners.filter((r) => r.kind === "lost").length,
    accessFaults: accessInjected,
    accessAnsweredDeletes: audit.accessAnsweredDeletes,
    clockSteps,
    alarmFailures,
    sweepsSkipped,
    malformedTables: audit.malformedTables,
    shortPages: audit.shortPages,
    secondaryLimits: audit.secondaryLimits,
    deletions: deletedAt.size,
    wrongfulDeletions: audit.wrongful.length,
    deletedTwice: audit.deletedTwice,
    goneWhileInCluster: audit.goneWrongly.length,
    goneRightly: audit.goneRightly,
    githubCallsDuringBackOff: audit.callsDuringBackOff,
    credentialsToOtherHosts,
    leftBehind: leftBehind.length,
    mostGithubCallsInOneSweep: audit.mostGithubCalls,
    githubBudget: o.githubBudget,
    sweepsToConverge: convergedAt + 1,
    twins: runners.filter((r) => r.kind === "twin" || r.kind === "twin-lost").length,
    twinsReaped: runners.filter((r) => (r.kind === "twin" || r.kind === "twin-lost") && r.uid !== undefined && deletedAt.has(r.uid)).length,
    idleTwinsKept: runners.filter((r) => r.kind === "twin-idle" && r.uid !== undefined && !deletedAt.has(r.uid)).length,
    unseenVanishPlanned: vanishing.length,
    unseenVanished,
    unseenVanishedEnded,
    unseenExplainedPlanned: explained.length,
    unseenExplained,
    githubCallsForExplained: audit.githubCallsForExplained,
    mostAlarmRunsInAMinute,
    agentStalls: agent?.figures.stalls ?? 0,
    agentRelists: agent?.figures.relists ?? 0,
    agentOutages: agent?.figures.outages ?? 0,
    agentReads: agent?.figures.reads ?? 0,
    clusterRepoints: agent?.figures.repoints ?? 0,
    identityChanges,
    failedRunners: runners.filter((r) => r.kind === "failed").length,
    failedDeleted: runners.filter((r) => r.kind === "failed" && deletedAt.has(r.uid!)).length,
    failedDeletedEarly: audit.failedDeletedEarly,
    failedDeletedTwice: audit.failedDeletedTwice,
    busyDeleted: audit.busyDeleted,
    heldDeletions: runners.filter((r) => r.kind === "held").length,
    heldFinished: finished.size,
    heldWhileRunning: runners.filter((r) => r.kind === "hung" && holds(r) && deletedAt.has(r.uid!)).length,
    finalizersRemovedWhileRunning: audit.finalizersRemovedWhileRunning,
    patches: audit.patches,
    jobPatchesLost: runners.filter((r) => r.kind === "patch-lost" || r.kind === "patch-lost-running" || r.kind === "twin-lost").length,
    jobPatchesLate: latePatches.length,
    twinsByIdOnly: runners.filter((r) => r.kind === "twin-lost").length,
  };
}
