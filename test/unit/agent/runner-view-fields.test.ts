// The agent's view holds what the ledger is sent of each runner (AgentRunner) and nothing of the object
// it came from: no pod template, no managedFields, no labels, nothing shared with the parsed object. Its
// heap with 50,000 runners is held to a bound in test/node/agent/agent-memory.test.ts.
import { describe, expect, it } from "vitest";
import { RunnerView, toAgentRunner } from "../../../src/agent/runner-view.ts";
import { AgentRunnerSchema } from "../../../src/cluster/agent-protocol.ts";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { managedFieldsOf } from "../../standins/kube/managed-fields.ts";

const NS = "arc-runners";
const CREATED = "2026-12-01T10:00:00Z";

/** An EphemeralRunner as the API server lists it: the stand-in's object with uid, creation time, finalizers and managedFields. */
function listed(name: string, o: Partial<Parameters<typeof makeEphemeralRunner>[0]> = {}) {
  const r = makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name, runnerId: 42, runnerImage: "ghcr.io/actions/actions-runner:2.330.0", ...o });
  const meta = { ...r.metadata, uid: `uid-${name}`, creationTimestamp: CREATED, finalizers: ["ephemeralrunner.actions.github.com/finalizer"] };
  const obj = JSON.parse(JSON.stringify({ ...r, metadata: meta })) as Record<string, unknown>;
  (obj["metadata"] as Record<string, unknown>)["managedFields"] = managedFieldsOf(obj as never, CREATED);
  return obj;
}

const busy = listed("busy", { workflowRunId: 7001, jobRepositoryName: "octo-org/octo-repo" });
const idle = listed("idle", { phase: "Pending" });
const failed = listed("failed", {
  phase: "Failed",
  status: { reason: "TooManyPodFailures", message: "pod failed 5 times", failures: { "pod-uid": "2026-12-01T10:05:00Z" } } as never,
});
const gone = listed("gone", { workflowRunId: 7002, jobRepositoryName: "octo-org/octo-repo" });
(gone["metadata"] as Record<string, unknown>)["deletionTimestamp"] = "2026-12-01T11:00:00Z";

/** Every object and array inside `value`. */
function containers(value: unknown, out = new Set<unknown>()): Set<unknown> {
  if (typeof value === "object" && value !== null && !out.has(value)) {
    out.add(value);
    for (const v of Object.values(value)) containers(v, out);
  }
  return out;
}

describe("the agent's view", () => {
  const view = new RunnerView([NS]);
  view.replace(NS, [busy, idle, failed, gone].map(toAgentRunner));

  it("holds exactly the protocol's fields of each runner", () => {
    const base = ["namespace", "name", "uid", "creationTimestamp", "runnerId"];
    expect(view.all().map((r) => [r.name, Object.keys(r).sort(), r.arc ? Object.keys(r.arc).sort() : []])).toEqual([
      ["busy", [...base, "workflowRunId", "jobRepositoryName"].sort(), []],
      ["failed", [...base, "arc"].sort(), ["failedAt", "message", "phase", "reason", "runnerVersion", "scaleSet"]],
      ["gone", [...base, "deletionTimestamp", "workflowRunId", "jobRepositoryName"].sort(), []],
      ["idle", [...base, "arc"].sort(), ["runnerVersion", "scaleSet"]],
    ]);
    const protocol = Object.keys(AgentRunnerSchema.entries);
    for (const r of view.all()) expect(protocol).toEqual(expect.arrayContaining(Object.keys(r)));
    expect(view.get(NS, "failed")?.arc).toEqual({
      phase: "Failed",
      reason: "TooManyPodFailures",
      message: "pod failed 5 times",
      failedAt: "2026-12-01T10:05:00.000Z",
      scaleSet: "arc-runners",
      runnerVersion: "2.330.0",
    });
  });

  it("shares no object with the listed ones, so a page is let go once read", () => {
    const listedParts = containers([busy, idle, failed, gone]);
    const kept = [...containers(view.all())].filter((c) => !view.all().includes(c as never) && c !== undefined);
    expect(kept.length).toBeGreaterThan(0);
    for (const r of view.all()) expect(listedParts.has(r)).toBe(false);
    for (const c of kept) expect(listedParts.has(c)).toBe(false);
  });

  it("keeps an upsert as the runner it is given and says whether the judge's fields moved", () => {
    const moved = toAgentRunner({ ...busy, status: { ...(busy["status"] as object), phase: "Running", ready: false } });
    expect(view.upsert(moved)).toBe(false);
    expect(view.get(NS, "busy")).toBe(moved);
    const rerun = toAgentRunner({ ...busy, status: { ...(busy["status"] as object), workflowRunId: 7003 } });
    expect(view.upsert(rerun)).toBe(true);
    expect(Object.keys(view.get(NS, "busy") ?? {}).sort()).toEqual(Object.keys(moved).sort());
  });
});
