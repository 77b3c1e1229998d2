// A program of an image's root filesystem run as a pod's container runs it,
// without a container runtime: in a mount namespace of its own (unshare), the
// root bind-mounted read-only, the pod's volumes bind-mounted at their paths,
// /tmp a small tmpfs, then chroot into it and become the pod's user
// (coreutils chroot --userspec), under no_new_privs (setpriv). Leaving uid 0
// clears the process's effective, permitted and ambient capabilities (its
// status shows CapEff 0), as `capabilities: drop: ["ALL"]` does; the bounding
// set is the one thing left as it was. The network is this machine's, so the
// stand-ins on 127.0.0.1 are reachable. Needs root (unshare, mount, chroot).
//
// Plain Node (type stripping): erasable TypeScript only.
import { spawn, type ChildProcess } from "node:child_process";

export interface RootfsRun {
  /** The image's root filesystem (buildah mount's path); its mount points must exist. */
  root: string;
  /** uid:gid, as runAsUser and runAsGroup give it. */
  user: string;
  /** The program and its arguments, as paths inside the root (the image's entrypoint). */
  argv: string[];
  /** The container's whole environment (nothing of this process's). */
  env: Record<string, string>;
  /** Host directories at paths inside the root, as the pod's volumes. */
  volumes: { host: string; path: string; readOnly: boolean }[];
}

/** The shell that lays out the mounts, then execs into the chrooted program; $1 is the root, the rest the program. */
const LAYOUT = `set -eu
root=$1; shift
mount --bind "$root" "$root"
while [ -n "\${ARC_REAPER_VOLUMES:-}" ]; do
  entry=\${ARC_REAPER_VOLUMES%%;*}; ARC_REAPER_VOLUMES=\${ARC_REAPER_VOLUMES#*;}
  host=\${entry%%|*}; rest=\${entry#*|}; path=\${rest%%|*}; mode=\${rest#*|}
  mount --bind "$host" "$root$path"
  if [ "$mode" = ro ]; then mount -o remount,bind,ro "$root$path"; fi
done
mount -t tmpfs -o size=16m,mode=1777,nosuid,nodev tmpfs "$root/tmp"
mount --rbind /dev "$root/dev"
mount --rbind /proc "$root/proc"
mount -o remount,bind,ro "$root"
user=$ARC_REAPER_USER
unset ARC_REAPER_VOLUMES ARC_REAPER_USER
exec setpriv --no-new-privs chroot --userspec="$user" "$root" "$@"`;

export function runInRootfs(run: RootfsRun): ChildProcess {
  const volumes = run.volumes.map((v) => `${v.host}|${v.path}|${v.readOnly ? "ro" : "rw"};`).join("");
  if (/[;|]/.test(run.volumes.map((v) => v.host + v.path).join(""))) throw new Error("a volume's path holds ; or |");
  // The layout's own variables are unset before the exec: only run.env reaches the program. Its PATH (the
  // image's) also finds this machine's mount, setpriv and chroot.
  const env = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", ...run.env, ARC_REAPER_VOLUMES: volumes, ARC_REAPER_USER: run.user };
  return spawn("unshare", ["--mount", "--propagation", "private", "--", "/bin/sh", "-c", LAYOUT, "sh", run.root, ...run.argv], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
}
