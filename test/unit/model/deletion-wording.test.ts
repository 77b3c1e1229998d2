// The words of every deletion-check code (src/model/deletion-codes.ts), once each, through the real paths
// (check-deletion.ts, finish-stuck.ts): the unit tests assert codes, this file pins what people read.
import { describe, expect, it } from "vitest";
import type { FinishOutcome } from "../../../src/cluster/finish-patch.ts";
import { DELETION_CODES, type DeletionCode } from "../../../src/model/deletion-codes.ts";
import type { DeletionWatch } from "../../../src/model/runner.ts";
import { SlidingWindow } from "../../../src/model/window.ts";
import { checkDeletion, type DeletionCheck } from "../../../src/reaper/check-deletion.ts";
import { FINISH_OVERLAY_COMMAND, finishStuck } from "../../../src/reaper/finish-stuck.ts";
import type { PassDeps } from "../../../src/reaper/reconcile-all.ts";
import { heldWatch, NOW } from "../support/deletion-fixtures.ts";

const ARC = ["ephemeralrunner.actions.github.com/finalizer"];
const watch = heldWatch;
const found = (finalizers = ARC) => ({ namespace: "arc", name: "r", uid: "u1", finalizers });
const STUCK = "stuck: deleted 1000s ago and still in arc, held by ARC's finalizer; never deleted again";

interface Finish {
  job?: { status: string; conclusion: string | null; runnerName?: string } | Error;
  github?: Error;
  outcome?: FinishOutcome;
  dryRun?: boolean;
  paused?: boolean;
  full?: boolean;
  noLink?: boolean;
  finalizers?: string[];
  w?: Partial<DeletionWatch>;
}

/** A stuck check (checkDeletion), then the finish of it (finishStuck) in a world as `o` says. */
async function finished(o: Finish): Promise<DeletionCheck> {
  const w = { ...watch, ...o.w };
  const stuck = checkDeletion(w, { kind: "found", runner: found(o.finalizers) }, NOW, 900);
  if (stuck.kind !== "stuck") throw new Error(`not stuck: ${stuck.kind}`);
  const github = o.github ?? {
    job: async () => {
      if (o.job instanceof Error) throw o.job;
      return { id: w.jobId, runnerName: w.name, ...(o.job ?? { status: "completed", conclusion: "success" }) };
    },
    run: async () => ({ status: "completed", conclusion: "success", runAttempt: 1 }),
    installationFor: async () => 1,
  };
  const cluster = o.noLink ? {} : { finishDeletion: async () => o.outcome ?? { kind: "finished" as const } };
  const d = {
    watched: [{ name: "default", cluster, namespaces: ["arc"] }],
    github,
    settings: { stuckSeconds: 900, dryRun: o.dryRun ?? false },
    now: NOW,
    clock: () => NOW,
    ledger: {
      countFinish: () => undefined,
      paused: () => o.paused ?? false,
      deletions: (now: number) => new SlidingWindow(o.full ? [NOW - 1000] : [], 1, now),
      saveDeletions: () => undefined,
    },
  } as unknown as PassDeps;
  return finishStuck(w, found(o.finalizers), stuck, d);
}

const not = (why: string) => `${STUCK}; not finished: ${why}`;
const WORDING: Record<DeletionCode, { name: string; check: () => DeletionCheck | Promise<DeletionCheck>; reason: string }> = {
  Went: { name: "its object left", check: () => checkDeletion(watch, { kind: "missing" }, NOW, 900), reason: "went 1000s after our delete" },
  CannotTell: {
    name: "its place could not be read",
    check: () => checkDeletion(watch, { kind: "unknown", why: "HTTP 503" }, NOW, 900),
    reason: "cannot tell whether it went: HTTP 503",
  },
  Stuck: {
    name: "still there, GitHub's word on its job",
    check: () => checkDeletion(watch, { kind: "found", runner: { ...found(), deletionTimestamp: "2026-12-01T11:44:00Z" } }, NOW, 900, "job 7 is in_progress"),
    reason:
      "stuck: deleted 1000s ago and still in arc (Terminating since 2026-12-01T11:44:00Z), held by ARC's finalizer; GitHub says job 7 is in_progress; never deleted again",
  },
  Finished: {
    name: "ARC's finalizers removed",
    check: () => finished({}),
    reason: `finished: ARC held it 1000s after our delete; GitHub says job 7 is completed (success), so its finalizers (${ARC[0]}) were removed (REAPER_FINISH_STUCK)`,
  },
  GoneWhenFinishing: {
    name: "404 when finishing",
    check: () => finished({ outcome: { kind: "gone" } }),
    reason: "went 1000s after our delete (404 when finishing it)",
  },
  NoFinishLink: {
    name: "a link that cannot patch",
    check: () => finished({ noLink: true }),
    reason: not("the link to cluster default cannot remove finalizers"),
  },
  NoFinalizer: { name: "no finalizer seen", check: () => finished({ finalizers: [] }), reason: not("no finalizer was seen on it") },
  ForeignFinalizer: {
    name: "a finalizer not ARC's",
    check: () => finished({ finalizers: [...ARC, "example.com/keep"] }),
    reason: not("it has finalizers that are not ARC's (example.com/keep): only ARC's are ever removed"),
  },
  GithubUnavailable: {
    name: "no App key",
    check: () => finished({ github: new Error("no private key") }),
    reason: not("GitHub cannot be asked (no private key)"),
  },
  NothingToAsk: {
    name: "no job, no run",
    check: () => finished({ w: { jobId: 0 } }),
    reason: not("its job is unknown and no run is recorded: GitHub cannot be asked about it"),
  },
  StillRunning: {
    name: "GitHub says it runs",
    check: () => finished({ job: { status: "in_progress", conclusion: null } }),
    reason: not("GitHub says job 7 is in_progress"),
  },
  JobNamesAnotherRunner: {
    name: "GitHub's job names another runner",
    check: () => finished({ job: { status: "completed", conclusion: "success", runnerName: "r-other" } }),
    reason: not("GitHub says job 7 ran on r-other, not on r: its word is not about this runner, kept"),
  },
  GithubError: { name: "GitHub's read fails", check: () => finished({ job: new Error("HTTP 502") }), reason: not("GitHub could not be read (HTTP 502)") },
  DryRun: {
    name: "would finish",
    check: () => finished({ dryRun: true }),
    reason: not("dry run: would remove ARC's finalizers (GitHub says job 7 is completed (success))"),
  },
  Paused: {
    name: "would finish",
    check: () => finished({ paused: true }),
    reason: not("paused: would remove ARC's finalizers (GitHub says job 7 is completed (success))"),
  },
  Cap: {
    name: "the cap reached",
    check: () => finished({ full: true }),
    reason: not("deletion cap of 1 in 60s reached, held back (GitHub says job 7 is completed (success))"),
  },
  FinishRefused: {
    name: "403",
    check: () => finished({ outcome: { kind: "refused", why: "HTTP 403: forbidden" } }),
    reason: not(
      `removing its finalizers was refused (HTTP 403: forbidden): the Role lacks patch on ephemeralrunners; apply the overlay: ${FINISH_OVERLAY_COMMAND}`,
    ),
  },
  FinishConflict: {
    name: "409/422",
    check: () => finished({ outcome: { kind: "conflict", why: "HTTP 409" } }),
    reason: not("the object changed since it was read (HTTP 409); looked at again in 900s"),
  },
  FinishFailed: {
    name: "500",
    check: () => finished({ outcome: { kind: "failed", status: 500, why: "HTTP 500" } }),
    reason: not("removing its finalizers failed (HTTP 500); looked at again in 900s"),
  },
};

describe("the words of every deletion-check code", () => {
  it("every code in DELETION_CODES has its case, and every case a code of it", () => {
    expect(Object.keys(WORDING).sort()).toEqual([...DELETION_CODES].sort());
  });

  it("the codes are a closed set of distinct names", () => {
    expect(new Set(DELETION_CODES).size).toBe(DELETION_CODES.length);
    for (const code of DELETION_CODES) expect(code).toMatch(/^[A-Z][A-Za-z]+$/);
  });

  for (const code of DELETION_CODES) {
    it(`${code}: ${WORDING[code].name}`, async () => {
      const c = await WORDING[code].check();
      expect(c.code).toBe(code);
      expect(c.reason).toBe(WORDING[code].reason);
    });
  }
});
