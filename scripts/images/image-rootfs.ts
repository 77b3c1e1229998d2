// A built image's root filesystem on this machine: a working container from
// it, mounted (buildah from + mount), with the image's run config; removed,
// mount and all, by `remove()` (the image itself is left as it was).
//
// Plain Node (type stripping): erasable TypeScript only.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildah } from "./buildah.ts";

export interface ImageRootfs {
  root: string;
  /** The image's config: Env as KEY=value, User, Entrypoint, Cmd, WorkingDir. */
  config: { Env?: string[]; User?: string; Entrypoint?: string[]; Cmd?: string[]; WorkingDir?: string };
  remove(): void;
}

/** `mountPoints` (paths inside the root) are made in the container's own layer, as a runtime makes a volume's. */
export function imageRootfs(image: string, mountPoints: string[]): ImageRootfs {
  const container = buildah(["from", "--pull=never", "--quiet", image]).trim();
  const remove = (): void => {
    for (const args of [
      ["umount", container],
      ["rm", container],
    ]) {
      try {
        buildah(args);
      } catch {
        // Unmounted or removed already.
      }
    }
  };
  try {
    const root = buildah(["mount", container]).trim();
    const inspected = JSON.parse(buildah(["inspect", "--type", "container", container])) as { OCIv1: { config?: ImageRootfs["config"] } };
    for (const p of mountPoints) mkdirSync(join(root, p), { recursive: true });
    return { root, config: inspected.OCIv1.config ?? {}, remove };
  } catch (e) {
    remove();
    throw e;
  }
}
