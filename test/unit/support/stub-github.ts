// A GitHub client stand-in for plain-Node tests: canned answers per kind of
// call, an error to throw instead, and every call recorded in order.
import type { Github, GithubJob, GithubRun } from "../../../src/github/github-client.ts";

export interface StubAnswers {
  installation?: number;
  job?: Partial<GithubJob>;
  run?: Partial<GithubRun>;
  /** undefined: GitHub lists no job of the run on that runner. */
  runnerJob?: Partial<GithubJob>;
  /** The run's jobs, one page each. */
  pages?: GithubJob[][];
  /** The first page of a run attempt's jobs. */
  attemptPage?: GithubJob[];
  /** Thrown by every call (after it is recorded). */
  throws?: unknown;
  /** Whether an installation of the repo failed recently (the reconcile order reads it). */
  installationFailedUntil?: (repo: string) => number;
}

export const ghJob = (over: Partial<GithubJob> = {}): GithubJob => ({
  id: 70,
  runId: 7,
  runAttempt: 1,
  status: "in_progress",
  conclusion: null,
  startedAt: "2026-12-01T11:00:00.000Z",
  completedAt: null,
  runnerName: "r-1",
  ...over,
});

export function stubGithub(a: StubAnswers = {}) {
  const calls: string[] = [];
  const answers: StubAnswers = { runnerJob: {}, ...a };
  const call = (what: string) => {
    calls.push(what);
    if (answers.throws !== undefined) throw answers.throws;
  };
  const api = {
    cache: { memory: { installationFailedUntil: answers.installationFailedUntil ?? (() => 0) } },
    async installationFor(repo: string) {
      call(`installationFor ${repo}`);
      return answers.installation ?? 1;
    },
    async job(_repo: string, id: number, installationId?: number) {
      call(`job ${id}${installationId !== undefined && installationId !== 1 ? ` @${installationId}` : ""}`);
      return ghJob({ id, ...answers.job });
    },
    async run(_repo: string, runId: number) {
      call(`run ${runId}`);
      const run: GithubRun = { id: runId, runAttempt: 1, status: "in_progress", conclusion: null, updatedAt: "2026-12-01T11:30:00.000Z", ...answers.run };
      return run;
    },
    async runnerJob(_repo: string, runId: number, runner: string, _installationId?: number, startedNotBefore?: number) {
      call(`runnerJob ${runId} ${runner}${startedNotBefore !== undefined ? ` >=${startedNotBefore}` : ""}`);
      return answers.runnerJob && ghJob({ runId, runnerName: runner, ...answers.runnerJob });
    },
    async attemptJobsPage(_repo: string, runId: number, attempt: number) {
      call(`jobs of run ${runId} attempt ${attempt}`);
      return { jobs: answers.attemptPage ?? [], last: true };
    },
    async runJobsPage(_repo: string, runId: number, _installationId: number, page: number) {
      call(`jobs of run ${runId} page ${page}`);
      const pages = answers.pages ?? [[]];
      const jobs = pages[page - 1];
      if (!jobs) throw new Error(`no page ${page}`);
      return { jobs, last: page >= pages.length };
    },
  };
  return { github: api as unknown as Github, calls, answers };
}
