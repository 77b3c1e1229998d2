/**
 * The registration the GitHub stand-in gives a started job when a test names none: `workflow_job.runner_id`
 * of its webhook (test/workers/support/stack.ts) and of its reads by id or in its run's jobs, so the two
 * agree as GitHub's own words do. Far below the Kubernetes stand-in's status.runnerIds (1,000,001 on).
 */
export const standinRunnerId = (jobId: number): number => 1000 + (jobId % 100_000);
