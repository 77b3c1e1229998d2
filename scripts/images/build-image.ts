// One image built from one of the repository's Dockerfiles, as the release
// builds it (its context the repository, its dockerignore file, its target),
// with buildah: chroot isolation, the host's network (npm ci reaches the
// registry), never pulling (the bases are in the store: the stand-ins, or the
// pinned ones pulled beforehand). Without --layers buildah commits what the
// Dockerfile's final stage adds as one layer (BuildKit makes one per COPY).
//
// Plain Node (type stripping): erasable TypeScript only.
import { ROOT } from "../server/build.ts";
import { buildah } from "./buildah.ts";

export interface ImageBuild {
  file: string;
  target?: string;
  /** The build context's ignore file (Dockerfile.server.dockerignore); .dockerignore when unset. */
  ignorefile?: string;
  tag: string;
  buildArgs: Record<string, string>;
  /** Whether buildah may pull a base that is not in its store (the pinned bases, where a registry is reachable). */
  pull: boolean;
}

/** Builds `tag` (replacing an image of that name) and returns the build's seconds. */
export function buildImage(b: ImageBuild): number {
  try {
    buildah(["rmi", b.tag]);
  } catch {
    // No image by that name yet.
  }
  const started = Date.now();
  buildah(
    [
      "bud",
      "--isolation",
      "chroot",
      "--network",
      "host",
      `--pull=${b.pull ? "missing" : "never"}`,
      "-f",
      b.file,
      ...(b.target ? ["--target", b.target] : []),
      ...(b.ignorefile ? ["--ignorefile", b.ignorefile] : []),
      ...Object.entries(b.buildArgs).flatMap(([k, v]) => ["--build-arg", `${k}=${v}`]),
      "-t",
      b.tag,
      ROOT,
    ],
    { progress: true },
  );
  return (Date.now() - started) / 1000;
}
