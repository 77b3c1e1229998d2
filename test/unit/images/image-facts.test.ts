// buildah inspect's JSON read into the report's terms (scripts/images/image-facts.ts).
import { describe, expect, it } from "vitest";
import { imageFacts } from "../../../scripts/images/image-facts.ts";

const layer = (size: number) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: `sha256:${"a".repeat(64)}`, size });

describe("imageFacts", () => {
  it("sums the manifest's layers and takes the config's labels and the digest", () => {
    const inspected = {
      FromImageDigest: `sha256:${"b".repeat(64)}`,
      Manifest: JSON.stringify({ layers: [layer(10_416_128), layer(153_795_584)] }),
      OCIv1: { config: { Labels: { "org.opencontainers.image.version": "0.1.0" } }, rootfs: { type: "layers", diff_ids: ["x", "y"] } },
    };
    expect(imageFacts(inspected)).toEqual({
      bytes: 164_211_712,
      layers: 2,
      labels: { "org.opencontainers.image.version": "0.1.0" },
      digest: `sha256:${"b".repeat(64)}`,
    });
  });

  it("throws when there is no manifest, or when manifest and config disagree on the layers", () => {
    expect(() => imageFacts({ Type: "buildah 0.0.1" })).toThrow(/no manifest/);
    expect(() => imageFacts({ Manifest: JSON.stringify({ layers: [layer(1)] }), OCIv1: { rootfs: { diff_ids: [] } } })).toThrow(/1 layers, the config 0/);
  });

  it("reads an image without labels", () => {
    expect(imageFacts({ Manifest: JSON.stringify({ layers: [layer(5)] }), OCIv1: { rootfs: { diff_ids: ["x"] } } }).labels).toEqual({});
  });
});
