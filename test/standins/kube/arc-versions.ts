// The ARC releases whose EphemeralRunner CRD the stand-in can serve, each an
// unmodified copy under test/fixtures/arc (see its README for the sources).
// Imports nothing from node: so workerd tests can name versions too.

export const ARC_VERSIONS = ["0.13.1", "0.14.2", "master-2026-06-30"] as const;
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
  "master-2026-06-30": {
    crdFile: "master-2026-06-30/actions.github.com_ephemeralrunners.yaml",
    sha256: "01d6c9b3fece063081d5d3ecf427ab8364aca72c4c44ba1a83af9ba7a8fea6f2",
    phaseColumn: "Phase",
  },
};

export function isArcVersion(v: unknown): v is ArcVersion {
  return typeof v === "string" && (ARC_VERSIONS as readonly string[]).includes(v);
}
