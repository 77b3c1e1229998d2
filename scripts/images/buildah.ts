// buildah, daemonless, as `npm run images` runs it: vfs storage (no overlay or
// fuse needed) and chroot isolation (no runc, no user namespaces), which work
// as root in a container or a CI runner alike.
//
// Plain Node (type stripping): erasable TypeScript only.
import { execFileSync } from "node:child_process";

/** The storage flags every buildah call here carries (one store: images built by one call are seen by the next). */
const STORAGE = ["--storage-driver", "vfs"];

/**
 * Runs `buildah ARGS` and returns its stdout; with `progress`, its output goes to
 * this process's stderr instead (builds print a lot) and "" is returned. Throws
 * naming the command and its stderr's end when buildah fails.
 */
export function buildah(args: string[], opts: { progress?: boolean } = {}): string {
  try {
    if (opts.progress) {
      execFileSync("buildah", [...STORAGE, ...args], { stdio: ["ignore", 2, 2] });
      return "";
    }
    return execFileSync("buildah", [...STORAGE, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 2 ** 20 });
  } catch (e) {
    const err = e as { status?: number; stderr?: string; code?: string };
    if (err.code === "ENOENT") throw new Error("buildah is not installed (Debian: apt-get install -y buildah)");
    const tail = (err.stderr ?? "").trim().split("\n").slice(-15).join("\n");
    throw new Error(`buildah ${args.slice(0, 3).join(" ")} … failed (exit ${err.status ?? "?"})${tail ? `:\n${tail}` : ""}`);
  }
}
