// A job GitHub reports is about a row's runner only when it names that runner:
// by its runner id where both the job and the row carry one (a registration is
// one runner; a name can come back), else by its runner name. A completion of a
// job that names another runner (or none) is never learned for the row: the
// row is kept and the answer counted as a GitHub error (JobNamesAnotherRunner).

/** What of a job names the runner that took it (GithubJob's fields). */
export interface JobRunner {
  id: number;
  runnerName: string | null;
  runnerId?: number;
}

/** What of a row (or a cluster's object) names its runner. */
export interface RowRunner {
  name: string;
  runnerId?: number;
}

/** Thrown where a job read or listed for a row names another runner: kept, counted as a GitHub error. */
export class JobNamesAnotherRunner extends Error {
  override name = "JobNamesAnotherRunner";
  readonly code = "JobNamesAnotherRunner";
  constructor(job: JobRunner, runner: RowRunner) {
    const theJobs = job.runnerName ? `${job.runnerName}${job.runnerId !== undefined ? ` (runner id ${job.runnerId})` : ""}` : "no runner";
    const theRows = `${runner.name}${runner.runnerId !== undefined ? ` (runner id ${runner.runnerId})` : ""}`;
    super(`GitHub says job ${job.id} ran on ${theJobs}, not on ${theRows}: its word is not about this runner, kept`);
  }
}

const hasId = (id: number | undefined): id is number => id !== undefined && id > 0;

/** Whether the job names the runner: its id where both carry one, else its name. */
function names(job: JobRunner, runner: RowRunner): boolean {
  if (hasId(job.runnerId) && hasId(runner.runnerId)) return job.runnerId === runner.runnerId;
  return job.runnerName !== null && job.runnerName === runner.name;
}

/** Throws JobNamesAnotherRunner unless the job names the runner; answers the job. */
export function jobNamingRunner<J extends JobRunner>(job: J, runner: RowRunner): J {
  if (!names(job, runner)) throw new JobNamesAnotherRunner(job, runner);
  return job;
}
