// An image's size as a registry stores it and a node pulls it: its layers
// gzip-compressed, as a push writes them (buildah push to an OCI layout in a
// temporary directory, removed after).
//
// Plain Node (type stripping): erasable TypeScript only.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildah } from "./buildah.ts";

/** The compressed layers' bytes (the manifest's layer sizes after a gzip push). */
export function compressedSize(image: string): number {
  const dir = mkdtempSync(join(tmpdir(), "arc-reaper-image-push-"));
  try {
    buildah(["push", "--quiet", "--compression-format", "gzip", image, `oci:${dir}:pushed`]);
    const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { manifests: { digest: string }[] };
    const digest = index.manifests[0]?.digest ?? "";
    const manifest = JSON.parse(readFileSync(join(dir, "blobs", ...digest.split(":")), "utf8")) as { layers: { size: number }[] };
    return manifest.layers.reduce((n, l) => n + l.size, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
