// Rows of a cluster no longer watched (src/reaper/unwatched-rows.ts, identify.ts): kept while something was
// heard of them within the history window, then closed unjudged with the code Unwatched; never a row of a
// watched cluster, never evidence that its runner left, never a delete.
import { describe, expect, it } from "vitest";
import { historyWindowMs } from "../../../src/model/history-window.ts";
import type { TrackedRunner, UnseenRunner } from "../../../src/model/runner.ts";
import type { Lookup } from "../../../src/model/view.ts";
import { identifyTracked, identifyUnseen } from "../../../src/reaper/identify.ts";
import { judge } from "../../../src/reaper/judge.ts";
import { unwatchedRows } from "../../../src/reaper/unwatched-rows.ts";
import { policy, REPO } from "../support/fakes.ts";

const NOW = Date.parse("2026-12-07T12:00:00Z");
const DAY = 86_400_000;
const HISTORY = { historyDays: 7, maxJobSeconds: 432_000 };
const how = (c: string) => (c === "new" ? undefined : "direct mode watches new alone (KUBE_CLUSTER_NAME)");

const lookup = (over: Partial<Lookup> = {}): Lookup => ({
  found: [],
  unreadable: [],
  absentAsOf: (place) => (place?.cluster === "new" ? NOW : 0),
  unwatched: unwatchedRows(how, NOW, HISTORY),
  ...over,
});
const row = (cluster: string, heardDaysAgo: number): TrackedRunner => ({
  runner: "r-1",
  repo: REPO,
  runId: 7,
  runAttempt: 1,
  jobId: 70,
  startedAt: new Date(NOW - (heardDaysAgo + 1) * DAY).toISOString(),
  installationId: 1,
  cluster,
  namespace: "arc-a",
  uid: "u-1",
  factAt: NOW - heardDaysAgo * DAY,
});

describe("rows of a cluster no longer watched", () => {
  it("the history window is REAPER_HISTORY_DAYS, never less than the bound and a day", () => {
    expect(historyWindowMs(HISTORY)).toBe(7 * DAY);
    expect(historyWindowMs({ historyDays: 1, maxJobSeconds: 432_000 })).toBe(6 * DAY);
  });

  it("are kept while something was heard of them within the history window", () => {
    const view = identifyTracked(row("old", 6.9), lookup());
    expect(view).toMatchObject({ kind: "unknown", why: expect.stringMatching(/cluster old, which has no view now/) });
  });

  it("close unjudged once nothing was heard of them within it, with the code Unwatched, and delete nothing", () => {
    const tracked = row("old", 7.1);
    const view = identifyTracked(tracked, lookup());
    expect(view).toEqual({
      kind: "missing",
      code: "Unwatched",
      why: `runner r-1: its cluster old is no longer watched (direct mode watches new alone (KUBE_CLUSTER_NAME)) and nothing was heard of it since ${new Date(tracked.factAt!).toISOString()}, over the history of 7 days: closed without judging the runner; nothing deleted`,
    });
    expect(judge({ tracked, cluster: view, now: NOW, policy })).toMatchObject({ verdict: "gone", code: "Unwatched" });
  });

  it("never touch a row of a watched cluster, nor a row whose cluster is unknown", () => {
    expect(identifyTracked(row("new", 30), lookup())).toEqual({ kind: "missing" }); // absent on fresh evidence: Gone, as before
    const { cluster: _c, ...noCluster } = row("old", 30);
    expect(identifyTracked(noCluster, lookup({ absentAsOf: () => 0 }))).toMatchObject({ kind: "unknown" });
  });

  it("an object of the row's runner found busy on its run in a watched cluster is judged there", () => {
    const busy = { name: "r-1", namespace: "arc-a", cluster: "new", uid: "u-2", workflowRunId: 7, createdAt: new Date(NOW - 30 * DAY).toISOString() };
    expect(identifyTracked(row("old", 30), lookup({ found: [busy] }))).toMatchObject({ kind: "found" });
  });

  it("unseen rows of such a cluster close likewise, from when they were first seen", () => {
    const unseen: UnseenRunner = {
      name: "r-2",
      uid: "u-9",
      cluster: "old",
      namespace: "arc-a",
      runId: 9,
      repo: REPO,
      firstSeen: NOW - 8 * DAY,
      dueAt: null,
      reason: "",
    };
    expect(identifyUnseen(unseen, lookup())).toMatchObject({ kind: "missing", code: "Unwatched" });
    expect(identifyUnseen({ ...unseen, firstSeen: NOW - DAY }, lookup())).toMatchObject({ kind: "unknown" });
  });
});
