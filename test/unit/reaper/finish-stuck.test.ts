// A held deletion finished (src/reaper/finish-stuck.ts): never while GitHub says the job runs or cannot be asked,
// never a finalizer not ARC's, and a changed object (409/422) or a 403 leaves it stuck with the reason.
import { describe, expect, it } from "vitest";
import type { FinishOutcome } from "../../../src/cluster/finish-patch.ts";
import { SlidingWindow } from "../../../src/model/window.ts";
import { finishStuck } from "../../../src/reaper/finish-stuck.ts";
import type { PassDeps } from "../../../src/reaper/reconcile-all.ts";
import { heldWatch, NOW } from "../support/deletion-fixtures.ts";

const watch = heldWatch;
const ARC = ["ephemeralrunner.actions.github.com/finalizer", "ephemeralrunner.actions.github.com/runner-registration-finalizer"];
const stuck = { kind: "stuck" as const, code: "Stuck" as const, reason: "stuck: deleted 1000s ago", dueAt: NOW + 900_000, newly: false };

function deps(o: {
  job?: { status: string; conclusion: string | null; runnerName?: string } | Error;
  run?: { status: string; conclusion: string | null };
  github?: Error;
  outcome?: FinishOutcome;
  dryRun?: boolean;
  paused?: boolean;
  cap?: number;
  times?: readonly number[];
}) {
  const patches: string[][] = [];
  const counted: string[] = [];
  let saved: number[] | undefined;
  const reads: string[] = [];
  const github = o.github ?? {
    job: async (_repo: string, jobId: number) => {
      reads.push(`job ${jobId}`);
      // As GitHub answers: there is no job 0.
      if (jobId === 0) throw new Error("HTTP 404: Not Found");
      if (o.job instanceof Error) throw o.job;
      return { id: jobId, runnerName: watch.name, ...(o.job ?? { status: "completed", conclusion: "success" }) };
    },
    run: async (_repo: string, runId: number) => {
      reads.push(`run ${runId}`);
      return o.run ?? { status: "completed", conclusion: "cancelled", runAttempt: 1 };
    },
    installationFor: async () => 1,
  };
  const cluster = {
    finishDeletion: async (_r: unknown, f: readonly string[]) => {
      patches.push([...f]);
      return o.outcome ?? { kind: "finished" as const };
    },
  };
  const d = {
    watched: [{ name: "default", cluster, namespaces: ["arc"] }],
    github,
    settings: { stuckSeconds: 900, dryRun: o.dryRun ?? false },
    now: NOW,
    clock: () => NOW + 5,
    ledger: {
      countFinish: (k: string) => counted.push(k),
      paused: () => o.paused ?? false,
      deletions: (now: number) => new SlidingWindow([...(o.times ?? [])], o.cap ?? 10, now),
      saveDeletions: (w: SlidingWindow) => (saved = w.toJSON()),
    },
  } as unknown as PassDeps;
  return { d, patches, counted, reads, saved: () => saved };
}
const runner = (finalizers = ARC) => ({ namespace: "arc", name: "r", uid: "u1", finalizers });

describe("finishStuck", () => {
  it("finishes once GitHub says completed: ARC's finalizers, exactly those seen, and how long ARC held it; a slot of the deletion cap taken", async () => {
    const { d, patches, counted, saved } = deps({ times: [NOW - 1000] });
    expect(await finishStuck(watch, runner(), stuck, d)).toEqual({
      kind: "went",
      code: "Finished",
      reason: `finished: ARC held it 1000s after our delete; GitHub says job 7 is completed (success), so its finalizers (${ARC.join(", ")}) were removed (REAPER_FINISH_STUCK)`,
    });
    expect(patches).toEqual([ARC]);
    expect(counted).toEqual(["finished"]);
    expect(saved()).toEqual([NOW - 1000, NOW + 5]);
  });

  it.each([
    ["in a dry run", { dryRun: true }, "DryRun"],
    ["while paused", { paused: true }, "Paused"],
    ["with the deletion cap reached", { cap: 2, times: [NOW - 1000, NOW - 2000] }, "Cap"],
  ] as const)("never %s: no patch, no slot taken, still stuck", async (_what, o, code) => {
    const { d, patches, counted, saved } = deps(o);
    expect(await finishStuck(watch, runner(), stuck, d)).toMatchObject({ kind: "stuck", code });
    expect(patches).toEqual([]);
    expect(counted).toEqual([]);
    expect(saved()).toBeUndefined();
  });

  it.each([
    ["GitHub says the job runs", { job: { status: "in_progress", conclusion: null } }, "StillRunning"],
    ["GitHub cannot be asked", { github: new Error("no private key") }, "GithubUnavailable"],
    ["GitHub's read fails", { job: new Error("HTTP 502") }, "GithubError"],
    ["GitHub's completed job names another runner", { job: { status: "completed", conclusion: "success", runnerName: "r-other" } }, "JobNamesAnotherRunner"],
  ] as const)("never when %s: no patch", async (_what, o, code) => {
    const { d, patches } = deps(o);
    const check = await finishStuck(watch, runner(), stuck, d);
    expect(check).toMatchObject({ kind: "stuck", code });
    expect(patches).toEqual([]);
  });

  it("a row whose job is unknown (0, learned from its completed run): its run is read, never job 0, and it finishes", async () => {
    const job0 = { ...watch, jobId: 0, runId: 42 };
    const { d, patches, reads } = deps({});
    expect(await finishStuck(job0, runner(), stuck, d)).toMatchObject({
      kind: "went",
      code: "Finished",
      reason: expect.stringContaining("GitHub says run 42 is completed (cancelled)"),
    });
    expect(reads).toEqual(["run 42"]);
    expect(patches).toEqual([ARC]);
    // A re-run under way: kept, and said why.
    const rerun = deps({ run: { status: "in_progress", conclusion: null } });
    expect(await finishStuck(job0, runner(), stuck, rerun.d)).toMatchObject({
      kind: "stuck",
      code: "StillRunning",
      reason: expect.stringMatching(/GitHub says run 42 is in_progress$/),
    });
    expect(rerun.patches).toEqual([]);
    // No run recorded either: GitHub is not asked at all.
    const none = deps({});
    expect(await finishStuck({ ...watch, jobId: 0 }, runner(), stuck, none.d)).toMatchObject({
      kind: "stuck",
      code: "NothingToAsk",
    });
    expect(none.reads).toEqual([]);
  });

  it("never removes a finalizer that is not ARC's, nor patches an object with none seen", async () => {
    for (const [f, code] of [
      [[...ARC, "example.com/keep"], "ForeignFinalizer"],
      [[], "NoFinalizer"],
    ] as const) {
      const { d, patches } = deps({});
      expect(await finishStuck(watch, runner([...f]), stuck, d)).toMatchObject({ kind: "stuck", code });
      expect(patches).toEqual([]);
    }
  });

  it("the object changed (409/422) or the Role refused (403): stuck, with why; a 403 names the overlay and is remembered", async () => {
    const changed = await finishStuck(
      watch,
      runner(),
      stuck,
      deps({ outcome: { kind: "conflict", why: "HTTP 422: testing value /metadata/finalizers failed" } }).d,
    );
    expect(changed).toMatchObject({
      kind: "stuck",
      code: "FinishConflict",
    });
    expect(changed).not.toHaveProperty("finishRefused");
    const refused = await finishStuck(watch, runner(), stuck, deps({ outcome: { kind: "refused", why: "HTTP 403: forbidden" } }).d);
    expect(refused).toMatchObject({
      kind: "stuck",
      code: "FinishRefused",
      finishRefused: "HTTP 403: forbidden",
    });
  });
});
