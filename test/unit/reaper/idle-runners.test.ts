// Runners that never work: the runner version an object tells (image tag or
// label), the sweep's count per scale set and version, and what the agent sends.
import { describe, expect, it } from "vitest";
import { agentArcFields, arcFieldsOf, fromAgentArcFields } from "../../../src/cluster/arc-failure.ts";
import { runnerVersionOf, versionOfImage } from "../../../src/cluster/runner-version.ts";
import type { ClusterRunner } from "../../../src/model/runner.ts";
import type { Lookup } from "../../../src/model/view.ts";
import { countIdle, whyIdle } from "../../../src/reaper/idle-runners.ts";
import { toAgentRunner } from "../../../src/agent/runner-view.ts";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";

const NOW = Date.parse("2026-12-03T12:00:00Z");
const HOUR = 3_600_000;
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

describe("the runner version an EphemeralRunner tells", () => {
  it("reads the runner container's image tag, without registry port, digest or suffix; not latest", () => {
    expect(versionOfImage("ghcr.io/actions/actions-runner:2.334.0")).toBe("2.334.0");
    expect(versionOfImage("registry.local:5000/runners/actions-runner:v2.330.1-ubuntu-22.04@sha256:abc")).toBe("2.330.1");
    expect(versionOfImage("registry.local:5000/runners/actions-runner")).toBeUndefined();
    expect(versionOfImage("ghcr.io/actions/actions-runner:latest")).toBeUndefined();
    expect(versionOfImage("ghcr.io/actions/actions-runner@sha256:abc")).toBeUndefined();
    expect(versionOfImage(7)).toBeUndefined();
  });

  it("takes the container named runner, else a runner-version label on the pod template or the object", () => {
    const r = makeEphemeralRunner({ namespace: "ns", scaleSet: "s", runnerImage: "ghcr.io/actions/actions-runner:2.334.0" });
    r.spec.spec.containers.unshift({ name: "sidecar", image: "docker:27.1.0-dind" });
    expect(runnerVersionOf(r)).toBe("2.334.0");
    const latest = makeEphemeralRunner({ namespace: "ns", scaleSet: "s" });
    expect(runnerVersionOf(latest)).toBeUndefined();
    latest.spec.metadata = { labels: { "runner-version": "2.333.1" } };
    expect(runnerVersionOf(latest)).toBe("2.333.1");
    const labelled = makeEphemeralRunner({ namespace: "ns", scaleSet: "s", labels: { "runner-version": "v2.329.0" } });
    expect(runnerVersionOf(labelled)).toBe("2.329.0");
    expect(runnerVersionOf(null)).toBeUndefined();
    expect(arcFieldsOf(labelled).runnerVersion).toBe("2.329.0");
  });
});

describe("what the agent sends of ARC's fields", () => {
  it("sends an idle runner's scale set and version (no phase: a phase-only change sends nothing), an Outdated one's phase too, a busy one nothing", () => {
    const idle = makeEphemeralRunner({ namespace: "ns", scaleSet: "s", arcVersion: "0.15.1", runnerImage: "ghcr.io/actions/actions-runner:2.300.0" });
    expect(toAgentRunner({ ...idle, metadata: { ...idle.metadata, uid: "u1", creationTimestamp: iso(NOW) } }).arc).toEqual({
      scaleSet: "s",
      runnerVersion: "2.300.0",
    });
    const outdated = makeEphemeralRunner({ namespace: "ns", scaleSet: "s", phase: "Outdated", runnerImage: "ghcr.io/actions/actions-runner:2.300.0" });
    const sent = agentArcFields(arcFieldsOf(outdated));
    expect(sent).toEqual({ phase: "Outdated", scaleSet: "s", runnerVersion: "2.300.0" });
    expect(fromAgentArcFields(sent)).toEqual({ phase: "Outdated", scaleSet: "s", runnerVersion: "2.300.0" });
    expect(agentArcFields({ ...arcFieldsOf(idle), workflowRunId: 5 })).toBeUndefined();
    expect(agentArcFields({ ...arcFieldsOf(idle), deletionTimestamp: iso(NOW) })).toBeUndefined();
    expect(agentArcFields({})).toBeUndefined();
  });
});

function listing(runners: ClusterRunner[]) {
  const byName = new Map<string, ClusterRunner[]>();
  for (const r of runners) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
  return {
    names: () => byName.keys(),
    lookup: (name: string): Lookup => ({ found: byName.get(name) ?? [], unreadable: [], absentAsOf: () => NOW }),
  };
}
const runner = (name: string, o: Partial<ClusterRunner> = {}): ClusterRunner => ({
  namespace: "arc-runners",
  name,
  uid: `uid-${name}`,
  createdAt: iso(NOW - 2 * HOUR),
  scaleSet: "old-set",
  runnerVersion: "2.300.0",
  ...o,
});

describe("the sweep's count of runners that never work", () => {
  it("counts idle runners past the setting and Outdated ones per scale set and version, and nothing busy, young, Failed, deleting or named by a job", () => {
    const fleet = [
      runner("a"),
      runner("b", { createdAt: iso(NOW - 5 * HOUR) }),
      runner("c", { runnerVersion: "2.334.0", scaleSet: "new-set" }),
      runner("young", { createdAt: iso(NOW - 10 * 60_000) }),
      runner("busy", { workflowRunId: 9 }),
      runner("failed", { phase: "Failed" }),
      runner("deleting", { deletionTimestamp: iso(NOW) }),
      runner("named"),
      runner("parked-1", { phase: "Outdated", createdAt: iso(NOW - 60_000) }),
      runner("parked-2", { phase: "Outdated", cluster: "east" }),
      runner("bare", { scaleSet: undefined, runnerVersion: undefined } as Partial<ClusterRunner>),
    ].map((r) => JSON.parse(JSON.stringify(r)) as ClusterRunner);
    const groups = countIdle(listing(fleet), new Set(["named"]), NOW, 3600);
    expect(groups).toEqual([
      { cluster: "default", namespace: "arc-runners", scaleSet: "", runnerVersion: "", why: "idle", n: 1, oldestCreatedAt: NOW - 2 * HOUR },
      { cluster: "default", namespace: "arc-runners", scaleSet: "new-set", runnerVersion: "2.334.0", why: "idle", n: 1, oldestCreatedAt: NOW - 2 * HOUR },
      { cluster: "default", namespace: "arc-runners", scaleSet: "old-set", runnerVersion: "2.300.0", why: "idle", n: 2, oldestCreatedAt: NOW - 5 * HOUR },
      { cluster: "default", namespace: "arc-runners", scaleSet: "old-set", runnerVersion: "2.300.0", why: "outdated", n: 1, oldestCreatedAt: NOW - 60_000 },
      { cluster: "east", namespace: "arc-runners", scaleSet: "old-set", runnerVersion: "2.300.0", why: "outdated", n: 1, oldestCreatedAt: NOW - 2 * HOUR },
    ]);
    // The threshold is the setting's: at 6 hours nothing is idle yet, the parked ones still count.
    expect(countIdle(listing(fleet), new Set(), NOW, 6 * 3600).map((g) => g.why)).toEqual(["outdated", "outdated"]);
    expect(whyIdle(runner("edge", { createdAt: iso(NOW - HOUR) }), NOW, 3600)).toBe("idle");
    expect(whyIdle(runner("edge", { createdAt: iso(NOW - HOUR + 1000) }), NOW, 3600)).toBeUndefined();
    expect(whyIdle(runner("no-time", { createdAt: undefined } as Partial<ClusterRunner>), NOW, 3600)).toBeUndefined();
  });
});
