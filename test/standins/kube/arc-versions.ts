// The ARC releases whose EphemeralRunner CRD the stand-in can serve, each an
// unmodified copy under test/fixtures/arc (see its README for the sources), and
// how each release's controller and listener behave where arc-reaper can see it.
// Imports nothing from node: so workerd tests can name versions too.

export const ARC_VERSIONS = ["0.13.1", "0.14.2", "master-2026-06-30", "0.15.1"] as const;
export type ArcVersion = (typeof ARC_VERSIONS)[number];

/** What a tenant serves when it does not say. */
export const DEFAULT_ARC_VERSION: ArcVersion = "0.14.2";

export interface ArcVersionFixture {
  /** The CRD file, relative to test/fixtures/arc. */
  crdFile: string;
  /** sha256 of the file as copied from upstream (test/fixtures/arc/README.md). */
  sha256: string;
  /** The printer column `kubectl get ephemeralrunners` shows `.status.phase` under. */
  phaseColumn: "Status" | "Phase";
}

const MASTER_CRD: ArcVersionFixture = {
  crdFile: "master-2026-06-30/actions.github.com_ephemeralrunners.yaml",
  sha256: "01d6c9b3fece063081d5d3ecf427ab8364aca72c4c44ba1a83af9ba7a8fea6f2",
  phaseColumn: "Phase",
};

export const ARC_VERSION_FIXTURES: Record<ArcVersion, ArcVersionFixture> = {
  "0.13.1": {
    crdFile: "0.13.1/actions.github.com_ephemeralrunners.yaml",
    sha256: "a8655e6de500d24cffe7844e56e0e275357ddcf0bf71831b0298124a2e69c8c8",
    phaseColumn: "Status",
  },
  "0.14.2": {
    crdFile: "actions.github.com_ephemeralrunners.yaml",
    sha256: "b4991b4aeb29bc21f872eb94fe1aa5fcaa9208681fc58ab32947dd27d1e7f00a",
    phaseColumn: "Status",
  },
  "master-2026-06-30": MASTER_CRD,
  // No 0.15 CRD could be had (test/fixtures/arc/README.md): its change logs name no
  // change to the EphemeralRunner schema, so the newest CRD we hold stands in for it.
  "0.15.1": MASTER_CRD,
};

/** How a release's controller and listener write and delete runners, as far as arc-reaper can see. */
export interface ArcBehaviour {
  /**
   * The phase of a runner that is up and has no job. Up to master of 2026-06-30 the
   * controller follows the pod ("Running"); from 0.15 the listener owns "Running"
   * (#4646) and sets it when a job is assigned, so an idle runner stays "Pending".
   */
  idlePhase: "Running" | "Pending";
  /**
   * Whether the controller removes its finalizer before it deregisters the runner
   * (0.15, #4664): an external delete is never held while GitHub says the job runs,
   * and the runner's pod goes at once. Earlier releases hold it (jobsStillRunning).
   */
  finalizerFirst: boolean;
  /** Runners carry `actions.github.com/actionable-revision` (0.15, #4638). */
  actionableRevision: boolean;
  /** EphemeralRunnerSet status counts (pending/running/failed); gone in 0.15 (#4557, #4570). arc-reaper reads none. */
  setStatusCounts: boolean;
}

const UP_TO_MASTER: ArcBehaviour = { idlePhase: "Running", finalizerFirst: false, actionableRevision: false, setStatusCounts: true };

export const ARC_BEHAVIOUR: Record<ArcVersion, ArcBehaviour> = {
  "0.13.1": UP_TO_MASTER,
  "0.14.2": UP_TO_MASTER,
  "master-2026-06-30": UP_TO_MASTER,
  "0.15.1": { idlePhase: "Pending", finalizerFirst: true, actionableRevision: true, setStatusCounts: false },
};

/** The versions whose controller holds a deletion while GitHub says the job runs (held, `stuck` deletions). */
export const ARC_VERSIONS_HOLDING_DELETIONS: readonly ArcVersion[] = ARC_VERSIONS.filter((v) => !ARC_BEHAVIOUR[v].finalizerFirst);

/** ARC 0.15's annotation on each runner (#4638): the revision of the set's spec it was made from. */
export const ACTIONABLE_REVISION_ANNOTATION = "actions.github.com/actionable-revision";

export function isArcVersion(v: unknown): v is ArcVersion {
  return typeof v === "string" && (ARC_VERSIONS as readonly string[]).includes(v);
}
