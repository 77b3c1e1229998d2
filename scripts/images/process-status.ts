// How a running process is confined, read from /proc: the check that an image's
// program runs as its pod would (scripts/images/run-in-rootfs.ts).
//
// Plain Node (type stripping): erasable TypeScript only.
import { readFileSync } from "node:fs";

export interface ProcessStatus {
  uid: string;
  /** Capability sets, as hex masks: all zero when nothing is held. */
  capEff: string;
  capPrm: string;
  noNewPrivs: string;
  /** Whether the process's own root ("/" in its mountinfo) is mounted read-only. */
  rootReadOnly: boolean;
}

export function processStatus(pid: number): ProcessStatus {
  const status = readFileSync(`/proc/${pid}/status`, "utf8").split("\n");
  const field = (name: string): string => status.find((l) => l.startsWith(`${name}:`))?.split(/\s+/)[1] ?? "?";
  // mountinfo: id parent major:minor root mount-point options …; the last mount on "/" is the one in force.
  const rootMount = readFileSync(`/proc/${pid}/mountinfo`, "utf8")
    .split("\n")
    .map((l) => l.split(" "))
    .filter((f) => f[4] === "/")
    .at(-1);
  return {
    uid: field("Uid"),
    capEff: field("CapEff"),
    capPrm: field("CapPrm"),
    noNewPrivs: field("NoNewPrivs"),
    rootReadOnly: (rootMount?.[5] ?? "").split(",").includes("ro"),
  };
}
