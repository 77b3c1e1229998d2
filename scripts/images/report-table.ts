// `npm run images`'s report on stdout: one row an image.
//
// Plain Node (type stripping): erasable TypeScript only.

export interface ImageReport {
  image: string;
  /** Uncompressed, in MB (10^6 bytes), as buildah and docker print an image's size. */
  sizeMB: number;
  /** Its layers gzip-compressed, as a registry stores them and a node pulls them, in MB. */
  compressedMB: number;
  layers: number;
  /** Of those, the base's. */
  baseLayers: number;
  buildSeconds: number;
  /** What running it showed, in a few words. */
  check: string;
}

/** A plain-text table, columns aligned, numbers right-aligned: sizes to 0.1 MB, times to 0.1 s. */
export function reportTable(rows: ImageReport[]): string {
  const header = ["image", "size (MB)", "gzip (MB)", "layers (base)", "build (s)", "run"];
  const cells = rows.map((r) => [r.image, r.sizeMB.toFixed(1), r.compressedMB.toFixed(1), `${r.layers} (${r.baseLayers})`, r.buildSeconds.toFixed(1), r.check]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? "").length)));
  const right = new Set([1, 2, 3, 4]);
  const line = (c: string[]) =>
    c
      .map((v, i) => (right.has(i) ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}
