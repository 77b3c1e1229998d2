// Asking GitHub on the judge's behalf (ask-github.ts, learn-from-github.ts) on
// plain Node: which calls are made, the facts recorded from the answers, and
// the verdict judged on them.
import { describe, expect, it } from "vitest";
import type { Fact } from "../../../src/model/facts.ts";
import type { ClusterRunner, RunnerRecord } from "../../../src/model/runner.ts";
import type { ClusterView } from "../../../src/model/view.ts";
import { askAboutJob, askAboutRunner, type AskDeps } from "../../../src/reaper/ask-github.ts";
import { learnFromGithub } from "../../../src/reaper/learn-from-github.ts";
import { decision } from "../support/decision.ts";
import { busyRunner, policy, REPO } from "../support/fakes.ts";
import { stubGithub, type StubAnswers } from "../support/stub-github.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const CREATED = NOW - 600_000_000;

const busy = (over: Partial<ClusterRunner> = {}): ClusterRunner => busyRunner(NOW, over);

/** A ledger's learn: the job's row from the facts (a run's completion on it), every call recorded. */
function learner(answer = true) {
  const learned: Fact[][] = [];
  const learn = (facts: Fact[]): RunnerRecord | undefined => {
    learned.push(facts);
    if (!answer) return undefined;
    const job = facts.find((f) => f.type !== "run-completed");
    const run = facts.find((f) => f.type === "run-completed");
    if (!job) return undefined;
    const r: RunnerRecord = {
      runner: job.runner,
      repo: job.repo,
      runId: job.runId,
      runAttempt: job.runAttempt,
      jobId: job.jobId,
      startedAt: job.startedAt,
      state: "running",
      reason: "",
      dueAt: null,
      story: [],
    };
    if (job.type === "job-completed") r.jobCompleted = { at: job.completedAt, conclusion: job.conclusion };
    if (run?.type === "run-completed") r.runCompleted = { at: run.updatedAt, conclusion: run.conclusion, attempt: run.runAttempt };
    return r;
  };
  return { learn, learned };
}

function deps(answers: StubAnswers, learnAnswers = true) {
  const gh = stubGithub(answers);
  const l = learner(learnAnswers);
  const d: AskDeps = { github: gh.github, policy, now: NOW, learn: l.learn };
  return { d, calls: gh.calls, learned: l.learned };
}

describe("learnFromGithub", () => {
  it("a runner without owner/repo or run: unknown, GitHub not asked", async () => {
    const { github, calls } = stubGithub();
    expect(await learnFromGithub(github, busy({ jobRepositoryName: "octo/repo/x" }))).toEqual({
      kind: "unknown",
      why: 'runner works on run 7 but status.jobRepositoryName "octo/repo/x" is not owner/repo: cannot ask GitHub',
    });
    expect(await learnFromGithub(github, busy({ jobRepositoryName: "octo /repo" }))).toMatchObject({ kind: "unknown" });
    expect(await learnFromGithub(github, busy({ jobRepositoryName: "x/octo/repo" }))).toMatchObject({ kind: "unknown" });
    expect(await learnFromGithub(github, busy({ jobRepositoryName: "octo/repo " }))).toMatchObject({ kind: "unknown" });
    expect(await learnFromGithub(github, busy({ jobRepositoryName: undefined, workflowRunId: undefined }))).toEqual({
      kind: "unknown",
      why: "runner works on run ? but status.jobRepositoryName null is not owner/repo: cannot ask GitHub",
    });
    expect(await learnFromGithub(github, busy({ workflowRunId: undefined }))).toMatchObject({ kind: "unknown" });
    expect(calls).toEqual([]);
  });

  it("its run completed: the run's completion and a job-started of job 0 at the object's creation", async () => {
    const { github, calls } = stubGithub({ installation: 9, run: { status: "completed", conclusion: null, runAttempt: 2, updatedAt: iso(NOW - 1000) } });
    const learned = await learnFromGithub(github, busy());
    expect(calls).toEqual(["installationFor octo/repo", "run 7"]);
    expect(learned).toEqual({
      kind: "known",
      facts: [
        {
          type: "run-completed",
          repo: REPO,
          runId: 7,
          runAttempt: 2,
          updatedAt: iso(NOW - 1000),
          conclusion: "completed",
          installationId: 9,
          source: "rest",
          names: undefined,
        },
        {
          type: "job-started",
          runner: "r-1",
          repo: REPO,
          runId: 7,
          runAttempt: 2,
          jobId: 0,
          startedAt: iso(CREATED),
          installationId: 9,
          source: "rest",
          names: undefined,
        },
      ],
    });
    const noCreation = await learnFromGithub(github, busy({ createdAt: undefined }));
    expect(noCreation.kind === "known" && noCreation.facts[1]).toMatchObject({ startedAt: iso(NOW - 1000) });
  });

  it("its run in progress: the job on that runner started after its creation (less the skew)", async () => {
    const { github, calls } = stubGithub({ runnerJob: { id: 71, runAttempt: 1, status: "in_progress", startedAt: iso(NOW - 5000) } });
    const learned = await learnFromGithub(github, busy());
    expect(calls).toEqual(["installationFor octo/repo", "run 7", `runnerJob 7 r-1 >=${CREATED - 60_000}`]);
    expect(learned).toMatchObject({
      kind: "known",
      facts: [
        { type: "job-started", runner: "r-1", repo: REPO, runId: 7, runAttempt: 1, jobId: 71, installationId: 1, source: "rest", startedAt: iso(NOW - 5000) },
      ],
      job: { id: 71 },
    });
    await learnFromGithub(github, busy({ createdAt: undefined }));
    expect(calls.at(-1)).toBe("runnerJob 7 r-1");
  });

  it("the job completed: a job-completed fact with GitHub's times", async () => {
    const { github } = stubGithub({ runnerJob: { id: 71, status: "completed", conclusion: null, startedAt: null, completedAt: iso(NOW - 3000) } });
    const learned = await learnFromGithub(github, busy());
    expect(learned.kind === "known" && learned.facts).toEqual([
      {
        type: "job-completed",
        runner: "r-1",
        repo: REPO,
        runId: 7,
        runAttempt: 1,
        jobId: 71,
        installationId: 1,
        source: "rest",
        names: undefined,
        startedAt: undefined,
        completedAt: iso(NOW - 3000),
        conclusion: "completed",
      },
    ]);
  });

  it("no job of the run on that runner, or one not started: unknown, saying which", async () => {
    const none = stubGithub({ runnerJob: undefined });
    expect(await learnFromGithub(none.github, busy())).toEqual({ kind: "unknown", why: "GitHub lists no job of run 7 in octo/repo on runner r-1" });
    const queued = stubGithub({ runnerJob: { id: 72, status: "queued", startedAt: null } });
    expect(await learnFromGithub(queued.github, busy())).toEqual({ kind: "unknown", why: "job 72 of run 7 in octo/repo has not started according to GitHub" });
    // Completed without a completion time: not a completion.
    const odd = stubGithub({ runnerJob: { id: 72, status: "completed", startedAt: null, completedAt: null } });
    expect(await learnFromGithub(odd.github, busy())).toMatchObject({ kind: "unknown" });
  });
});

const record = (over: Partial<RunnerRecord> = {}): RunnerRecord => ({
  id: 1,
  runner: "r-1",
  repo: REPO,
  runId: 7,
  runAttempt: 1,
  jobId: 70,
  startedAt: iso(NOW - 500_000_000),
  installationId: 3,
  state: "running",
  reason: "",
  dueAt: null,
  story: [],
  ...over,
});
const view: ClusterView = { kind: "found", runner: busy() };

describe("askAboutJob", () => {
  it("reads the job with the installation the repository has now; running past the bound: delete over-bound", async () => {
    const { d, calls, learned } = deps({ installation: 5, job: { status: "in_progress" } });
    const asked = await askAboutJob(record(), view, d);
    expect(calls).toEqual(["installationFor octo/repo", "job 70 @5"]);
    expect(learned).toEqual([]);
    expect(decision(asked.verdict)).toEqual({ code: "OverBound", verdict: "delete", cause: "over-bound" });
    expect(asked.record).toEqual(record());
  });

  it("completed: the completion is recorded as a fact and judged like the webhook's", async () => {
    const { d, learned } = deps({ installation: 5, job: { status: "completed", conclusion: "cancelled", completedAt: iso(NOW - 400_000), names: undefined } });
    const asked = await askAboutJob(record(), view, d);
    expect(learned).toEqual([
      [
        {
          type: "job-completed",
          runner: "r-1",
          repo: REPO,
          runId: 7,
          runAttempt: 1,
          jobId: 70,
          startedAt: iso(NOW - 500_000_000),
          completedAt: iso(NOW - 400_000),
          conclusion: "cancelled",
          installationId: 5,
          source: "rest",
          names: undefined,
        },
      ],
    ]);
    expect(asked.record?.jobCompleted).toEqual({ at: iso(NOW - 400_000), conclusion: "cancelled" });
    expect(decision(asked.verdict)).toEqual({ code: "JobCompleted", verdict: "delete", cause: "job-completed" });
  });

  it("completed without a conclusion, the ledger answering no row: judged on GitHub's word, the row as it was", async () => {
    const { d, learned } = deps({ job: { status: "completed", conclusion: null, completedAt: iso(NOW - 10_000) } }, false);
    const asked = await askAboutJob(record(), view, d);
    expect(learned[0]?.[0]).toMatchObject({ conclusion: "completed" });
    expect(asked.record).toEqual(record());
    expect(decision(asked.verdict)).toEqual({ code: "InGrace", verdict: "wait", dueAt: NOW + 290_000 });
  });

  it("a recheck within the bound: GitHub says running, kept until the next recheck an interval from now", async () => {
    const { d } = deps({ job: { status: "in_progress" } });
    const asked = await askAboutJob(record({ startedAt: iso(NOW - 7_200_000) }), view, d);
    expect(decision(asked.verdict)).toEqual({ code: "Running", verdict: "keep", dueAt: NOW + 3_600_000 });
  });
});

describe("askAboutJob: a recheck of a run listed in progress", () => {
  const listedWord = { kind: "run-running" as const, runId: 7, runAttempt: 1 };
  const due = () => record({ startedAt: iso(NOW - 7_200_000) });

  it("its attempt's page shows the job completed: recorded like the webhook's, judged on it, no job read", async () => {
    const { d, calls, learned } = deps({});
    const done = {
      id: 70,
      runId: 7,
      runAttempt: 1,
      status: "completed",
      conclusion: "success",
      startedAt: null,
      completedAt: iso(NOW - 120_000),
      runnerName: "r-1",
    };
    const asked = await askAboutJob(due(), view, { ...d, listed: async () => listedWord, attemptJob: async () => done }, true);
    expect(calls).toEqual(["installationFor octo/repo"]);
    expect(learned[0]?.[0]).toMatchObject({ type: "job-completed", jobId: 70, completedAt: done.completedAt, source: "rest" });
    expect(decision(asked.verdict)).toEqual({ code: "InGrace", verdict: "wait", dueAt: NOW + 180_000 });
  });

  it("the page shows it running, or not at all: kept, next recheck an interval on; never read on its own", async () => {
    for (const shown of [
      { id: 70, runId: 7, runAttempt: 1, status: "in_progress", conclusion: null, startedAt: null, completedAt: null, runnerName: "r-1" },
      undefined,
    ]) {
      const { d, calls } = deps({});
      const asked = await askAboutJob(due(), view, { ...d, listed: async () => listedWord, attemptJob: async () => shown }, true);
      expect(calls).toEqual(["installationFor octo/repo"]);
      expect(decision(asked.verdict)).toEqual({ code: "Running", verdict: "keep", dueAt: NOW + 3_600_000 });
    }
  });

  it("a run not listed: the attempt is not read, the job is", async () => {
    const { d, calls } = deps({ job: { status: "in_progress" } });
    let pages = 0;
    await askAboutJob(
      due(),
      view,
      {
        ...d,
        listed: async () => undefined,
        attemptJob: async () => {
          pages++;
          return undefined;
        },
      },
      true,
    );
    expect(pages).toBe(0);
    expect(calls).toEqual(["installationFor octo/repo", "job 70"]);
  });
});

describe("askAboutRunner", () => {
  it("GitHub cannot place it: kept with why, nothing recorded", async () => {
    const { d, learned } = deps({ runnerJob: undefined });
    const asked = await askAboutRunner(busy(), view, d);
    expect(asked.record).toBeUndefined();
    expect(decision(asked.verdict)).toEqual({ code: "NotPlaced", verdict: "keep" });
    expect(learned).toEqual([]);
  });

  it("what GitHub said could not be recorded: kept as an error", async () => {
    const { d } = deps({ runnerJob: { id: 71, status: "in_progress", startedAt: iso(NOW - 1000) } }, false);
    const asked = await askAboutRunner(busy(), view, d);
    expect(asked.record).toBeUndefined();
    expect(decision(asked.verdict)).toEqual({ code: "NotRecorded", verdict: "keep", error: true });
  });

  it("a run completed long ago: recorded, then deleted on the run's word", async () => {
    const { d, learned } = deps({ run: { status: "completed", conclusion: "success", updatedAt: iso(NOW - 900_000) } });
    const asked = await askAboutRunner(busy(), view, d);
    expect(learned).toHaveLength(1);
    expect(asked.record).toMatchObject({ jobId: 0, runCompleted: { conclusion: "success" } });
    expect(decision(asked.verdict)).toEqual({ code: "RunCompleted", verdict: "delete", cause: "run-completed" });
  });

  it("a job running past the bound: confirmed by this very read, deleted without asking again", async () => {
    const { d, calls } = deps({ runnerJob: { id: 71, status: "in_progress", startedAt: iso(NOW - 500_000_000) } });
    const asked = await askAboutRunner(busy(), view, d);
    expect(calls).toHaveLength(3);
    expect(decision(asked.verdict)).toEqual({ code: "OverBound", verdict: "delete", cause: "over-bound" });
  });

  it("a job running within the bound: kept to its bound", async () => {
    const { d } = deps({ runnerJob: { id: 71, status: "in_progress", startedAt: iso(NOW - 1000) } });
    const asked = await askAboutRunner(busy({ createdAt: iso(NOW - 2000) }), view, d);
    expect(decision(asked.verdict)).toEqual({ code: "Running", verdict: "keep", dueAt: NOW + 3_599_000 });
  });
});
