// Identity by runner id (src/reaper/identify.ts): the object whose status.runnerId is the job's
// runner_id is its runner whatever its job fields; another id rules an object out only in a
// cluster where ids have been seen to match GitHub's; without an id on either side, the rules
// of names, runs and uids decide as before.
import { describe, expect, it } from "vitest";
import type { TrackedRunner } from "../../../src/model/runner.ts";
import { policy } from "../support/fakes.ts";
import { facts as jobFacts, iso, lookup, obj, T0 } from "../support/identity-fixtures.ts";
import { identifyTracked } from "../../../src/reaper/identify.ts";
import { judge } from "../../../src/reaper/judge.ts";

/** The job's facts, naming the registration that took it (runner id 501). */
const facts = (o: Partial<TrackedRunner> = {}): TrackedRunner => jobFacts({ runnerId: 501, ...o });

describe("the job's runner by its runner id", () => {
  it("a hung runner that carries its runner id but no job fields is the job's runner (the listener's patch never came)", () => {
    const hung = obj({ namespace: "arc-a", runnerId: 501 });
    const view = identifyTracked(facts(), lookup([hung]));
    expect(view).toEqual({ kind: "found", runner: hung, byId: true });
    // And the judge deletes it on the job's completion, as it would a runner carrying the run.
    const done = facts({ jobCompleted: { at: iso(T0 - 600_000), conclusion: "success" } });
    expect(judge({ tracked: done, cluster: view, now: T0, policy })).toMatchObject({ code: "JobCompleted", verdict: "delete", cause: "job-completed" });
  });

  it("twins in two namespaces: the one with the job's id is named, whatever the other carries", () => {
    const twin = obj({ namespace: "arc-b", runnerId: 502, workflowRunId: 7 });
    const mine = obj({ namespace: "arc-a", runnerId: 501 });
    expect(identifyTracked(facts(), lookup([twin, mine]))).toEqual({ kind: "found", runner: mine, byId: true });
  });

  it("names the object by id though another place could not be read (a registration is one object)", () => {
    const mine = obj({ namespace: "arc-a", runnerId: 501 });
    const view = identifyTracked(facts(), lookup([mine], { unreadable: [{ place: { cluster: "default", namespace: "arc-b" }, why: "403" }] }));
    expect(view).toMatchObject({ kind: "found", byId: true });
  });

  it("two objects carrying the same id are ambiguous: kept", () => {
    const a = obj({ namespace: "arc-a", runnerId: 501 });
    const b = obj({ namespace: "arc-b", runnerId: 501, cluster: "east" });
    expect(identifyTracked(facts(), lookup([a, b]))).toMatchObject({ kind: "unknown", why: expect.stringContaining("ambiguous") });
  });
});

describe("another runner id, where ids are known to match", () => {
  it("an idle namesake of another id: the job's runner is gone on fresh evidence, the namesake is not it", () => {
    const view = identifyTracked(facts(), lookup([obj({ namespace: "arc-a", runnerId: 777 })], { idsMatch: ["default"] }));
    expect(view).toEqual({ kind: "missing", why: "runner r-1 is no longer in the cluster (only objects of its name that are not it: arc-a (runner id 777))" });
  });

  it("a namesake of another id busy on the facts' run, even with the uid seen busy, is not the job's runner (re-registered)", () => {
    const other = obj({ namespace: "arc-a", runnerId: 777, workflowRunId: 7 });
    const view = identifyTracked(facts({ uid: other.uid, namespace: "arc-a", cluster: "default" }), lookup([other], { idsMatch: ["default"] }));
    expect(view.kind).toBe("missing");
  });

  it("the same namesake on a stale view is kept (absence needs fresh evidence)", () => {
    const view = identifyTracked(facts(), lookup([obj({ namespace: "arc-a", runnerId: 777 })], { idsMatch: ["default"], asOf: T0 - 120_000 }));
    expect(view).toMatchObject({ kind: "unknown", stale: true });
  });
});

describe("where ids were never seen to match, or one side has none: the rules before ids", () => {
  it("another id rules nothing out in a cluster where ids never matched: the object busy on the run is named", () => {
    const busy = obj({ namespace: "arc-a", runnerId: 777, workflowRunId: 7 });
    expect(identifyTracked(facts(), lookup([busy]))).toEqual({ kind: "found", runner: busy });
  });

  it("ids matching in another cluster say nothing of this one", () => {
    const busy = obj({ namespace: "arc-a", runnerId: 777, workflowRunId: 7 });
    expect(identifyTracked(facts(), lookup([busy], { idsMatch: ["east"] }))).toEqual({ kind: "found", runner: busy });
  });

  it("an object before the controller wrote its id is judged by run and uid", () => {
    const busy = obj({ namespace: "arc-a", workflowRunId: 7 });
    expect(identifyTracked(facts(), lookup([busy], { idsMatch: ["default"] }))).toEqual({ kind: "found", runner: busy });
    const idle = obj({ namespace: "arc-a" });
    expect(identifyTracked(facts(), lookup([idle], { idsMatch: ["default"] })).kind).toBe("missing");
  });

  it("facts without a runner id (null or 0 in the payload, an older row): an idle object carrying an id is not named", () => {
    const idle = obj({ namespace: "arc-a", runnerId: 501 });
    expect(identifyTracked(facts({ runnerId: undefined }), lookup([idle], { idsMatch: ["default"] })).kind).toBe("missing");
    const busy = obj({ namespace: "arc-a", runnerId: 501, workflowRunId: 7 });
    expect(identifyTracked(facts({ runnerId: undefined }), lookup([busy], { idsMatch: ["default"] }))).toEqual({ kind: "found", runner: busy });
  });
});
