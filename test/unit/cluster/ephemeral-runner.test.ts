// One EphemeralRunner reader for the Worker (runner-answers.ts) and the agent (runner-view.ts): the same
// workflowRunId rule on both sides (a positive safe integer; anything else is no run, so the runner reads
// as idle and is kept), on objects as each ARC version's CRD shapes them, and errors that name the field.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { toAgentRunner } from "../../../src/agent/runner-view.ts";
import { EphemeralRunnerError, readEphemeralRunner } from "../../../src/cluster/ephemeral-runner.ts";
import { ephemeralRunnerFromRead, runnersFromList, toClusterRunner } from "../../../src/cluster/runner-answers.ts";
import { UnacceptableAnswer } from "../../../src/cluster/http-answer.ts";
import { ARC_VERSION_FIXTURES, ARC_VERSIONS, jobStartedStatus, makeEphemeralRunner } from "../../standins/kube/control.ts";

const NS = "arc-runners";
let uids = 0;
/** A runner as the API server sends it: the stand-in's object with what the store adds on create (uid, creationTimestamp). */
function runner(o: Parameters<typeof makeEphemeralRunner>[0]) {
  const r = makeEphemeralRunner(o);
  return { ...r, metadata: { ...r.metadata, uid: `00000000-0000-0000-0000-${String(++uids).padStart(12, "0")}`, creationTimestamp: "2026-12-01T10:00:00Z" } };
}
/** Direct mode's reading of a read by name (read-runner.ts). */
const runnerFromRead = (status: number, namespace: string, name: string, body: unknown) =>
  toClusterRunner(namespace, ephemeralRunnerFromRead(status, name, body));
const list = (items: unknown[]) => ({ kind: "EphemeralRunnerList", apiVersion: "actions.github.com/v1alpha1", metadata: { resourceVersion: "1" }, items });

/** The CRD's schema of status.workflowRunId in a fixture. */
function crdRunIdType(version: (typeof ARC_VERSIONS)[number]): unknown {
  const crd = parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../../fixtures/arc", ARC_VERSION_FIXTURES[version].crdFile), "utf8")) as {
    spec: { versions: { schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown> } } } } }[] };
  };
  return crd.spec.versions[0]?.schema.openAPIV3Schema.properties.status.properties["workflowRunId"];
}

describe.each(ARC_VERSIONS)("an EphemeralRunner of ARC %s", (version) => {
  it("its CRD says workflowRunId is an int64 (so JSON brings a number)", () => {
    expect(crdRunIdType(version)).toEqual({ format: "int64", type: "integer" });
  });

  it("reads the same on both sides: idle, then busy with its run and repository", () => {
    const idle = runner({ namespace: NS, scaleSet: "set", phase: "Pending", arcVersion: version });
    const busy = { ...idle, status: { ...idle.status, ...jobStartedStatus({ workflowRunId: 6100, jobRepositoryName: "octo-org/octo-repo" }) } };
    const { runners } = runnersFromList(200, NS, list([idle, busy]));
    expect(runners.map((r) => [r.name, r.uid, r.workflowRunId, r.jobRepositoryName, r.createdAt])).toEqual([
      [idle.metadata.name, idle.metadata.uid, undefined, undefined, idle.metadata.creationTimestamp],
      [idle.metadata.name, idle.metadata.uid, 6100, "octo-org/octo-repo", idle.metadata.creationTimestamp],
    ]);
    expect(toAgentRunner(idle)).toEqual({
      namespace: NS,
      name: idle.metadata.name,
      uid: idle.metadata.uid,
      creationTimestamp: idle.metadata.creationTimestamp,
      runnerId: idle.status?.runnerId,
      // An idle runner's scale set (and its version, when its image tag or a label tells): what the count of runners that never work needs.
      arc: { scaleSet: "set" },
    });
    expect(toAgentRunner(busy)).toMatchObject({ workflowRunId: 6100, jobRepositoryName: "octo-org/octo-repo" });
    expect(toAgentRunner(busy)).not.toHaveProperty("arc");
  });

  it.each([0, -3, 1.5, "6100", Number.MAX_SAFE_INTEGER + 2, null, true])(
    "a workflowRunId of %s is no run on both sides (kept as idle, not dropped)",
    (runId) => {
      const r = runner({ namespace: NS, scaleSet: "set", arcVersion: version, workflowRunId: 1 });
      const odd = { ...r, status: { ...r.status, workflowRunId: runId } };
      expect(runnerFromRead(200, NS, r.metadata.name, odd)).not.toHaveProperty("workflowRunId");
      expect(runnersFromList(200, NS, list([odd])).runners).toHaveLength(1);
      const agent = toAgentRunner(odd);
      expect(agent.uid).toBe(r.metadata.uid);
      expect(agent).not.toHaveProperty("workflowRunId");
    },
  );

  it("status.runnerId, written by the controller before any job, is read on both sides, idle or busy", () => {
    const idle = runner({ namespace: NS, scaleSet: "set", phase: "Pending", arcVersion: version, runnerId: 4711 });
    expect(runnerFromRead(200, NS, idle.metadata.name, idle).runnerId).toBe(4711);
    expect(runnersFromList(200, NS, list([idle])).runners[0]?.runnerId).toBe(4711);
    expect(toAgentRunner(idle).runnerId).toBe(4711);
  });

  it.each([0, -3, 1.5, "4711", Number.MAX_SAFE_INTEGER + 2, null, true])(
    "a runnerId of %s is no id on both sides (today's rules judge it, never 'another registration')",
    (id) => {
      const r = runner({ namespace: NS, scaleSet: "set", arcVersion: version });
      const odd = { ...r, status: { ...r.status, runnerId: id } };
      expect(runnerFromRead(200, NS, r.metadata.name, odd)).not.toHaveProperty("runnerId");
      expect(runnersFromList(200, NS, list([odd])).runners).toHaveLength(1);
      expect(toAgentRunner(odd)).not.toHaveProperty("runnerId");
    },
  );

  it("the largest safe run id is a run on both sides", () => {
    const r = runner({ namespace: NS, scaleSet: "set", arcVersion: version, workflowRunId: Number.MAX_SAFE_INTEGER });
    expect(runnerFromRead(200, NS, r.metadata.name, r).workflowRunId).toBe(Number.MAX_SAFE_INTEGER);
    expect(toAgentRunner(r).workflowRunId).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe("errors name the field by its path and keep their cause", () => {
  it("a list item without a uid fails the list, naming items[1].metadata.uid", () => {
    const r = runner({ namespace: NS, scaleSet: "set" });
    const { uid: _uid, ...noUid } = r.metadata;
    let e: unknown;
    try {
      runnersFromList(200, NS, list([r, { ...r, metadata: noUid }]));
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(UnacceptableAnswer);
    expect((e as Error).message).toBe("HTTP 200: EphemeralRunnerList.items[1].metadata.uid: expected a non-empty string, got nothing");
    expect((e as Error).cause).toBeInstanceOf(EphemeralRunnerError);
  });

  it("names the wrong field and its value", () => {
    expect(() => readEphemeralRunner({ metadata: { name: "a", uid: "u", deletionTimestamp: 5 } })).toThrow(
      "EphemeralRunner.metadata.deletionTimestamp: expected a timestamp string, got 5",
    );
    expect(() => readEphemeralRunner("x")).toThrow('EphemeralRunner: expected an object, got "x"');
    expect(() => runnersFromList(200, NS, { kind: "EphemeralRunnerList", metadata: {} })).toThrow(
      "HTTP 200: EphemeralRunnerList.items: expected an array, got nothing",
    );
  });
});
