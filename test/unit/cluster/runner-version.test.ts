// Which runner version an EphemeralRunner runs, as far as the object tells (src/cluster/runner-version.ts).
import { describe, expect, it } from "vitest";
import { runnerVersionOf, versionOfImage } from "../../../src/cluster/runner-version.ts";

describe("versionOfImage", () => {
  it.each([
    ["ghcr.io/actions/actions-runner:2.334.0", "2.334.0"],
    ["ghcr.io/actions/actions-runner:v2.334.0", "2.334.0"],
    ["ghcr.io/actions/actions-runner:2.334.0-ubuntu-22.04", "2.334.0"],
    ["ghcr.io/actions/actions-runner:2.334.0_x", "2.334.0"],
    ["ghcr.io/actions/actions-runner:2.334.0+meta", "2.334.0"],
    ["ghcr.io/actions/actions-runner:2.334.0.1", "2.334.0"],
    ["registry:5000/actions-runner:2.334.0@sha256:abc", "2.334.0"],
    ["actions-runner:1234.1234.123456", "1234.1234.123456"],
  ])("reads %s as %s", (image, version) => {
    expect(versionOfImage(image)).toBe(version);
  });

  it.each([
    ["no tag", "ghcr.io/actions/actions-runner"],
    ["a registry port but no tag", "registry:5000/actions-runner"],
    ["a digest only", "ghcr.io/actions/actions-runner@sha256:2.334.0"],
    ["latest", "ghcr.io/actions/actions-runner:latest"],
    ["two parts", "actions-runner:2.334"],
    ["a five-digit part", "actions-runner:12345.1.1"],
    ["a seven-digit patch", "actions-runner:1.1.1234567"],
    ["text glued on", "actions-runner:2.334.0beta"],
    ["a prefix", "actions-runner:x2.334.0"],
    ["not text", 2334],
  ])("finds none in %s", (_what, image) => {
    expect(versionOfImage(image)).toBeUndefined();
  });
});

const withContainers = (containers: unknown, extra: Record<string, unknown> = {}) => ({ spec: { spec: { containers }, ...extra } });

describe("runnerVersionOf", () => {
  it("takes the tag of the container named runner", () => {
    const containers = [
      { name: "sidecar", image: "busybox:1.36.1" },
      { name: "runner", image: "ghcr.io/actions/actions-runner:2.334.0" },
    ];
    expect(runnerVersionOf(withContainers(containers))).toBe("2.334.0");
  });

  it("else the runner-version label of the pod template, then of the object, read as a version when it is one", () => {
    const untagged = [{ name: "runner", image: "ghcr.io/actions/actions-runner:latest" }];
    expect(runnerVersionOf(withContainers(untagged, { metadata: { labels: { "runner-version": "v2.333.1-custom" } } }))).toBe("2.333.1");
    expect(runnerVersionOf({ ...withContainers(untagged), metadata: { labels: { "runner-version": "2.332.0" } } })).toBe("2.332.0");
    expect(
      runnerVersionOf({
        ...withContainers(untagged, { metadata: { labels: { "runner-version": "pod" } } }),
        metadata: { labels: { "runner-version": "object" } },
      }),
    ).toBe("pod");
    expect(runnerVersionOf({ metadata: { labels: { "runner-version": "nightly" } } })).toBe("nightly");
    expect(runnerVersionOf({ metadata: { labels: { "runner-version": "x".repeat(60) } } })).toHaveLength(40);
  });

  it("prefers the image's tag to a label", () => {
    const tagged = [{ name: "runner", image: "actions-runner:2.334.0" }];
    expect(runnerVersionOf({ ...withContainers(tagged), metadata: { labels: { "runner-version": "2.1.0" } } })).toBe("2.334.0");
  });

  it.each([
    ["nothing", undefined],
    ["not an object", "runner"],
    ["no spec", {}],
    ["a spec that is not an object", { spec: "x" }],
    ["containers that are not a list", withContainers({ name: "runner", image: "a:2.334.0" })],
    ["no container named runner", withContainers([{ name: "main", image: "a:2.334.0" }])],
    ["a runner container that is not an object", withContainers(["runner"])],
    ["an empty label", { metadata: { labels: { "runner-version": "" } } }],
    ["a label that is not text", { metadata: { labels: { "runner-version": 2 } } }],
    ["labels that are not an object", { metadata: { labels: "runner-version=2.334.0" } }],
    ["another label", { metadata: { labels: { version: "2.334.0" } } }],
  ])("says nothing for %s", (_what, obj) => {
    expect(runnerVersionOf(obj)).toBeUndefined();
  });
});
