// The GitHub edge: an App (JWT) for App endpoints and installation tokens,
// restricted at mint time to actions:read and cached until shortly before
// they expire. All requests go through the sweep's call budget.
import { App } from "@octokit/app";
import { Octokit } from "@octokit/core";
import { RequestError } from "@octokit/request-error";
import { budgetedFetch, GithubBudgetExhausted, GithubRateLimited, type CallBudget } from "./call-budget.ts";
import type { GithubCache } from "./installation-and-rate-memory.ts";
import { toPkcs8 } from "./private-key.ts";
import type * as v from "valibot";
import { sameOriginFetch } from "./same-origin-fetch.ts";
import {
  DeliveriesAnswer,
  InstallationAnswer,
  JobAnswer,
  readAnswer,
  RunAnswer,
  RunJobsAnswer,
  RunsAnswer,
  TokenAnswer,
  toJob,
  toRun,
  type GithubJob,
  type GithubRun,
} from "./github-answers.ts";
import { errorText } from "../model/error-text.ts";

const TOKEN_PERMISSIONS = { actions: "read" } as const;
const TOKEN_REFRESH_MARGIN_MS = 5 * 60_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** A repository whose installation could not be found is asked about again after this long. */
const INSTALLATION_RETRY_MS = 3_600_000;

export type { GithubJob, GithubRun } from "./github-answers.ts";

/** A run as the repository's listing of runs shows it: its latest attempt and that attempt's status. */
export interface ListedRun {
  id: number;
  runAttempt: number;
  status: string;
}

export interface HookDelivery {
  id: string; // above 2^53: kept as the exact digits
  guid: string;
  deliveredAt: string;
  redelivery: boolean;
  statusCode: number;
  event: string;
  action: string | null;
}

export interface GithubOptions {
  apiUrl: string;
  appId: string;
  privateKey: string;
  budget: CallBudget;
  cache: GithubCache;
  timeoutMs?: number;
}

export class GithubError extends Error {
  readonly status: number | null;
  constructor(status: number | null, message: string, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

export type Github = ReturnType<typeof createGithub>;

export function createGithub(opts: GithubOptions) {
  const session = openSession(opts);
  return {
    cache: opts.cache,
    /** A token for the installation: from the cache, else minted (restricted to actions:read). */
    installationToken: session.installationToken,
    ...installationLookup(session),
    ...installationChecks(session),
    ...jobReads(session),
    ...runListings(session),
    ...hookDeliveries(session),
  };
}

/** The App (JWT) and its installations' clients, each with a cached token: what every call below goes through. */
function openSession(opts: GithubOptions) {
  const timeoutMs = opts.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const clientFor = (scope: string) =>
    Octokit.defaults({
      baseUrl: opts.apiUrl,
      request: { fetch: sameOriginFetch(opts.apiUrl, budgetedFetch(opts.budget, opts.cache.memory.rate(scope), timeoutMs)) },
    });
  const Client = clientFor("app");
  const app = new App({ appId: opts.appId, privateKey: toPkcs8(opts.privateKey), Octokit: Client, log: quietLog });

  async function installationToken(installationId: number): Promise<string> {
    const cached = opts.cache.tokens.get(installationId);
    if (cached && cached.expiresAt - TOKEN_REFRESH_MARGIN_MS > Date.now()) return cached.token;
    let data: v.InferOutput<typeof TokenAnswer>;
    try {
      data = await read(`minting a token for installation ${installationId}`, TokenAnswer, () =>
        app.octokit.request("POST /app/installations/{installation_id}/access_tokens", {
          installation_id: installationId,
          permissions: TOKEN_PERMISSIONS,
        }),
      );
    } catch (e) {
      // Uninstalled (404) or refused (401): the id is dead; its repositories are looked up again.
      if (e instanceof GithubError && (e.status === 401 || e.status === 404)) {
        opts.cache.tokens.delete(installationId);
        opts.cache.memory.revokeInstallation(installationId, Date.now() + INSTALLATION_RETRY_MS);
      }
      throw e;
    }
    opts.cache.tokens.set(installationId, { token: data.token, expiresAt: Date.parse(data.expires_at) });
    return data.token;
  }

  async function asInstallation(installationId: number): Promise<Octokit> {
    return new (clientFor(String(installationId)))({ auth: await installationToken(installationId) });
  }

  /** A REST read as the installation: a 401 (the token was revoked) drops the token and the repository's installation. */
  async function readAs<S extends v.GenericSchema>(
    repo: string,
    installationId: number,
    what: string,
    schema: S,
    send: (octokit: Octokit) => Promise<{ data: unknown }>,
  ): Promise<v.InferOutput<S>> {
    const octokit = await asInstallation(installationId);
    try {
      return await read(what, schema, () => send(octokit));
    } catch (e) {
      if (e instanceof GithubError && e.status === 401) {
        opts.cache.tokens.delete(installationId);
        opts.cache.memory.forgetInstallation(repo);
      }
      throw e;
    }
  }

  const [ownerOf, nameOf] = [(repo: string) => repo.split("/")[0]!, (repo: string) => repo.split("/")[1]!];
  return { opts, app, installationToken, readAs, ownerOf, nameOf };
}

type Session = ReturnType<typeof openSession>;

/** Which installation covers a repository: remembered, named by the facts, else looked up (App JWT). */
function installationLookup({ opts, app, ownerOf, nameOf }: Session) {
  return {
    /**
     * The installation that covers a repository: the one its latest delivery named (or an earlier
     * look-up found), else `named` (what the runner's facts say) unless it was revoked, else
     * looked up with the App JWT and remembered in the ledger.
     */
    async installationFor(repo: string, named?: number): Promise<number> {
      const cached = opts.cache.memory.installation(repo);
      if (cached !== undefined) return cached;
      if (named !== undefined && !opts.cache.memory.installationRevoked(named)) return named;
      const failedUntil = opts.cache.memory.installationFailedUntil(repo);
      if (failedUntil > Date.now()) {
        throw new GithubError(null, `the installation for ${repo} could not be found; not asked again before ${new Date(failedUntil).toISOString()}`);
      }
      let data: v.InferOutput<typeof InstallationAnswer>;
      try {
        data = await read(`looking up the installation for ${repo}`, InstallationAnswer, () =>
          app.octokit.request("GET /repos/{owner}/{repo}/installation", { owner: ownerOf(repo), repo: nameOf(repo) }),
        );
      } catch (e) {
        // Not installed there (404) or not allowed (403): back off, so one such repository cannot eat every sweep's budget.
        if (e instanceof GithubError && (e.status === 404 || e.status === 403)) {
          opts.cache.memory.rememberInstallationFailure(repo, Date.now() + INSTALLATION_RETRY_MS);
        }
        throw e;
      }
      if (opts.cache.memory.installationRevoked(data.id)) {
        // Suspended: GitHub still names it, and its tokens are refused. Asked again after a while.
        opts.cache.memory.rememberInstallationFailure(repo, Date.now() + INSTALLATION_RETRY_MS);
        throw new GithubError(
          null,
          `the installation ${data.id} of ${repo} was refused a token (uninstalled or suspended); not asked again before ${new Date(Date.now() + INSTALLATION_RETRY_MS).toISOString()}`,
        );
      }
      opts.cache.memory.rememberInstallation(repo, data.id);
      return data.id;
    },
  };
}

/** What GitHub says now of an installation, and of a repository's installation (App JWT, no cache): a claim's confirmation. */
function installationChecks({ app, ownerOf, nameOf }: Session) {
  return {
    /** What GitHub says of an installation now (App JWT): 404 is deleted, `suspended_at` set is suspended. */
    async installationState(installationId: number): Promise<"live" | "suspended" | "deleted"> {
      try {
        const data = await read(`reading installation ${installationId}`, InstallationAnswer, () =>
          app.octokit.request("GET /app/installations/{installation_id}", { installation_id: installationId }),
        );
        return data.suspended_at ? "suspended" : "live";
      } catch (e) {
        if (e instanceof GithubError && e.status === 404) return "deleted";
        throw e;
      }
    },

    /** The installation that covers a repository now (App JWT, no cache), or undefined when GitHub answers 404. */
    async repositoryInstallation(repo: string): Promise<number | undefined> {
      try {
        const data = await read(`looking up the installation for ${repo}`, InstallationAnswer, () =>
          app.octokit.request("GET /repos/{owner}/{repo}/installation", { owner: ownerOf(repo), repo: nameOf(repo) }),
        );
        return data.id;
      } catch (e) {
        if (e instanceof GithubError && e.status === 404) return undefined;
        throw e;
      }
    },
  };
}

/** A job, a run, and the job a runner took in a run (as the installation). */
function jobReads({ readAs, ownerOf, nameOf }: Session) {
  return {
    async job(repo: string, jobId: number, installationId: number): Promise<GithubJob> {
      const data = await readAs(repo, installationId, `reading job ${jobId} in ${repo}`, JobAnswer, (octokit) =>
        octokit.request("GET /repos/{owner}/{repo}/actions/jobs/{job_id}", { owner: ownerOf(repo), repo: nameOf(repo), job_id: jobId }),
      );
      return toJob(data);
    },

    async run(repo: string, runId: number, installationId: number): Promise<GithubRun> {
      const data = await readAs(repo, installationId, `reading run ${runId} in ${repo}`, RunAnswer, (octokit) =>
        octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}", { owner: ownerOf(repo), repo: nameOf(repo), run_id: runId }),
      );
      return toRun(data);
    },

    /**
     * Finds the job a runner took in a run (latest attempt), paging through the run's jobs.
     * A name can come back within one run: jobs that started before `startedNotBefore` (ms)
     * ran on an earlier runner of that name and are passed over.
     */
    async runnerJob(repo: string, runId: number, runner: string, installationId: number, startedNotBefore?: number): Promise<GithubJob | undefined> {
      for (let page = 1; ; page++) {
        const data = await readAs(repo, installationId, `listing the jobs of run ${runId} in ${repo}`, RunJobsAnswer, (octokit) =>
          octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs", {
            owner: ownerOf(repo),
            repo: nameOf(repo),
            run_id: runId,
            filter: "latest",
            per_page: 100,
            page,
          }),
        );
        const found = data.jobs.find(
          (j) => j.runner_name === runner && (startedNotBefore === undefined || !j.started_at || Date.parse(j.started_at) >= startedNotBefore),
        );
        if (found) return toJob(found);
        if (data.jobs.length < 100 || page * 100 >= data.total_count) return undefined;
      }
    },
  };
}

/** Pages of a run's jobs and of a repository's runs in progress: the reads a recheck shares (as the installation). */
function runListings({ readAs, ownerOf, nameOf }: Session) {
  return {
    /** One page (100 jobs) of a run's latest attempt: the read that answers for every job of the run at once (src/reaper/recheck-runs.ts). */
    async runJobsPage(repo: string, runId: number, installationId: number, page: number): Promise<{ jobs: GithubJob[]; last: boolean }> {
      const data = await readAs(repo, installationId, `listing the jobs of run ${runId} in ${repo}`, RunJobsAnswer, (octokit) =>
        octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs", {
          owner: ownerOf(repo),
          repo: nameOf(repo),
          run_id: runId,
          filter: "latest",
          per_page: 100,
          page,
        }),
      );
      return { jobs: data.jobs.map(toJob), last: data.jobs.length < 100 || page * 100 >= data.total_count };
    },

    /**
     * The first page (100 jobs) of one attempt of a run: a recheck's read of a run still in progress, at the attempt
     * its tracked jobs belong to (src/reaper/recheck-runs.ts). The attempt's endpoint takes no `filter`: it lists that attempt's jobs.
     */
    async attemptJobsPage(repo: string, runId: number, attempt: number, installationId: number): Promise<{ jobs: GithubJob[]; last: boolean }> {
      const data = await readAs(repo, installationId, `listing the jobs of run ${runId} attempt ${attempt} in ${repo}`, RunJobsAnswer, (octokit) =>
        octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs", {
          owner: ownerOf(repo),
          repo: nameOf(repo),
          run_id: runId,
          attempt_number: attempt,
          per_page: 100,
        }),
      );
      return { jobs: data.jobs.map(toJob), last: data.jobs.length < 100 || data.total_count <= 100 };
    },

    /**
     * One page (100 runs, newest first) of the repository's runs in progress, each at its latest attempt: the
     * read that answers a recheck "still running" for every tracked job of a listed run (src/reaper/running-runs.ts).
     */
    async inProgressRunsPage(repo: string, installationId: number, page: number): Promise<{ runs: ListedRun[]; last: boolean }> {
      const data = await readAs(repo, installationId, `listing the runs in progress in ${repo}`, RunsAnswer, (octokit) =>
        octokit.request("GET /repos/{owner}/{repo}/actions/runs", {
          owner: ownerOf(repo),
          repo: nameOf(repo),
          status: "in_progress",
          exclude_pull_requests: true,
          per_page: 100,
          page,
        }),
      );
      const runs = data.workflow_runs.map((r) => ({ id: r.id, runAttempt: r.run_attempt ?? 1, status: r.status ?? "" }));
      return { runs, last: data.workflow_runs.length < 100 || page * 100 >= data.total_count };
    },
  };
}

/** The App's webhook deliveries, and asking for one again (App JWT). */
function hookDeliveries({ app }: Session) {
  return {
    /**
     * The App's webhook deliveries since `since` (only failed or succeeded ones with `status`), newest first, paging with the cursor
     * (from `cursor` when resuming). Stops before a page when `stop()` says so:
     * then `complete` is false and `cursor` says where to go on.
     */
    async deliveriesSince(
      since: number,
      opts: { cursor?: string; stop?: () => boolean; status?: "failure" | "success" } = {},
    ): Promise<{ deliveries: HookDelivery[]; complete: boolean; cursor?: string }> {
      const deliveries: HookDelivery[] = [];
      let cursor = opts.cursor;
      for (let first = true; ; first = false) {
        if (!first && opts.stop?.()) return { deliveries, complete: false, cursor };
        const what = `listing ${opts.status ? `${opts.status} ` : ""}webhook deliveries`;
        const response = await call(what, () =>
          app.octokit.request("GET /app/hook/deliveries", {
            per_page: 100,
            // failure: status codes 400-599 only; success: 200-399 (apps/list-webhook-deliveries).
            ...(opts.status ? { status: opts.status } : {}),
            ...(cursor ? { cursor } : {}),
            // Delivery ids exceed 2^53: read the body ourselves so no digit is lost.
            request: { parseSuccessResponseBody: false },
          }),
        );
        const page = parseDeliveries(await new Response(response.data as unknown as ReadableStream).text(), what);
        let older = false;
        for (const d of page) {
          if (Date.parse(d.deliveredAt) < since) older = true;
          else deliveries.push(d);
        }
        cursor = nextCursor(response.headers.link);
        if (older || !cursor || page.length === 0) return { deliveries, complete: true };
      }
    },

    async redeliver(deliveryId: string): Promise<void> {
      if (!/^\d+$/.test(deliveryId)) throw new GithubError(null, `delivery id ${JSON.stringify(deliveryId)} is not a number`);
      // The id goes into the URL as the exact digits it came with.
      await call(`asking GitHub to redeliver ${deliveryId}`, () => app.octokit.request(`POST /app/hook/deliveries/${deliveryId}/attempts`));
    },
  };
}

/** An answer that is not the API's: kept and counted as an error by whoever asked. */
function unreadable(what: string, why: string): GithubError {
  return new GithubError(null, `${what}: GitHub's answer is not the API's (${why})`);
}

/** A request whose answer's body is read by `schema`: anything else is an error naming what is wrong. */
async function read<S extends v.GenericSchema>(what: string, schema: S, send: () => Promise<{ data: unknown }>): Promise<v.InferOutput<S>> {
  const { data } = await call(what, send);
  const answer = readAnswer(schema, data);
  if (!answer.ok) throw unreadable(what, answer.why);
  return answer.value;
}

async function call<T>(what: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (e) {
    throw toGithubError(what, e);
  }
}

function toGithubError(what: string, e: unknown): GithubError | GithubBudgetExhausted | GithubRateLimited {
  if (e instanceof GithubBudgetExhausted || e instanceof GithubRateLimited) return e;
  const cause = e instanceof RequestError && e.cause instanceof Error ? e.cause : e;
  if (cause instanceof GithubBudgetExhausted || cause instanceof GithubRateLimited) return cause;
  // @octokit/request reports a network failure, a timeout included, as a "500" with the cause attached.
  if (cause instanceof Error && cause !== e) {
    return new GithubError(null, `${what}: ${cause.name === "TimeoutError" ? "timed out" : cause.message}`, { cause });
  }
  if (e instanceof RequestError) {
    const message = (e.response?.data as { message?: string } | undefined)?.message ?? e.message;
    let hint = "";
    if (what.startsWith("minting") && (e.status === 403 || e.status === 422)) {
      hint = " (the App needs the Actions: read permission, and the installation must have accepted it)";
    }
    if (e.status === 401) hint = " (check GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY)";
    return new GithubError(e.status, `${what}: GitHub answered ${e.status}: ${message}${hint}`, { cause: e });
  }
  const reason = e instanceof Error && e.name === "TimeoutError" ? "timed out" : errorText(e);
  return new GithubError(null, `${what}: ${reason}`, { cause: e });
}

function parseDeliveries(text: string, what: string): HookDelivery[] {
  // Quote the id before JSON.parse sees it, so it survives as its exact digits.
  const safe = text.replace(/("id"\s*:\s*)(\d+)/g, '$1"$2"');
  let json: unknown;
  try {
    json = JSON.parse(safe);
  } catch {
    throw unreadable(what, `a text of ${text.length} characters, not JSON`);
  }
  const read = readAnswer(DeliveriesAnswer, json);
  if (!read.ok) throw unreadable(what, read.why);
  return read.value.map((d) => ({
    id: d.id,
    guid: d.guid,
    deliveredAt: d.delivered_at,
    redelivery: d.redelivery,
    statusCode: d.status_code,
    event: d.event,
    action: d.action,
  }));
}

function nextCursor(link: string | undefined): string | undefined {
  const next = link?.split(",").find((part) => /rel="next"/.test(part));
  const url = next && /<([^>]+)>/.exec(next)?.[1];
  return url ? (new URL(url).searchParams.get("cursor") ?? undefined) : undefined;
}

// @octokit/app warns through console by default; arc-reaper logs its own structured lines.
const quietLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
