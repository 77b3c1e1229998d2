// An image made from nothing: a working container from scratch, its root
// filesystem filled on this machine, committed, the container removed whatever
// happens (the stand-in bases; scripts/images/standin-*-base.ts).
//
// Plain Node (type stripping): erasable TypeScript only.
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { buildah } from "./buildah.ts";

/**
 * Commits `name` from a scratch container whose root `fill` writes (the
 * Debian layout: /bin, /lib, /lib64 and /sbin link into /usr), configured
 * by `config` (buildah config's flags, e.g. ["--env", "PATH=…", "--user", "65532"]).
 */
export function scratchImage(name: string, fill: (root: string) => void, config: string[]): void {
  const container = buildah(["from", "--pull=never", "scratch"]).trim();
  try {
    const root = buildah(["mount", container]).trim();
    for (const d of ["usr/bin", "usr/sbin", "usr/lib", "usr/lib64"]) mkdirSync(join(root, d), { recursive: true });
    for (const d of ["bin", "sbin", "lib", "lib64"]) symlinkSync(`usr/${d}`, join(root, d));
    fill(root);
    buildah(["umount", container]);
    buildah(["config", ...config, container]);
    buildah(["commit", "--quiet", container, name]);
  } finally {
    try {
      buildah(["rm", container]);
    } catch {
      // Removed already, or never made: nothing left to clean.
    }
  }
}
