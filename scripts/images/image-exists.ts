// Whether buildah's store holds an image by this name.
//
// Plain Node (type stripping): erasable TypeScript only.
import { buildah } from "./buildah.ts";

export function imageExists(name: string): boolean {
  try {
    buildah(["inspect", "--type", "image", "--format", "{{.FromImageID}}", name]);
    return true;
  } catch (e) {
    if (/not installed/.test((e as Error).message)) throw e;
    return false;
  }
}
