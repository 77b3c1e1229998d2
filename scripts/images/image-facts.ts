// What `buildah inspect --type image` says of an image, in the report's terms.
//
// Plain Node (type stripping): erasable TypeScript only.

export interface ImageFacts {
  /** The layers' bytes, uncompressed (as buildah and docker report an image's size). */
  bytes: number;
  layers: number;
  labels: Record<string, string>;
  /** The manifest's digest in the local store. */
  digest: string;
}

/** From buildah inspect's JSON: its manifest's layers (sizes) and its OCI config's labels. */
export function imageFacts(inspected: unknown): ImageFacts {
  const j = inspected as {
    FromImageDigest?: string;
    Manifest?: string;
    OCIv1?: { config?: { Labels?: Record<string, string> }; rootfs?: { diff_ids?: string[] } };
  };
  if (typeof j.Manifest !== "string") throw new Error("buildah inspect gave no manifest: not an image?");
  const manifest = JSON.parse(j.Manifest) as { layers?: { size?: number }[] };
  const layers = manifest.layers ?? [];
  const diffIds = j.OCIv1?.rootfs?.diff_ids ?? [];
  if (layers.length !== diffIds.length) throw new Error(`the manifest lists ${layers.length} layers, the config ${diffIds.length}`);
  return {
    bytes: layers.reduce((n, l) => n + (l.size ?? 0), 0),
    layers: layers.length,
    labels: j.OCIv1?.config?.Labels ?? {},
    digest: j.FromImageDigest ?? "",
  };
}
