// The GitHub edge: an App (JWT) for App endpoints and installation tokens,
// restricted at mint time to actions:read and cached until shortly before
// they expire. All requests go through the sweep's call budget.
import { App } from "@octokit/app";
import { Octokit } from "@octokit/core";
import { RequestError } from "@octokit/request-error";
import { budgetedFetch, GithubBudgetExhausted, GithubRateLimited, NOT_MODIFIED_BODY_BYTES, type CallBudget } from "./call-budget.ts";
import { UNREADABLE_NOT_MODIFIED, unreadableNotModified, validatorsOf, validatorsToSend } from "./conditional-read.ts";
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
  /** A code for what went wrong where the status alone does not say (UnreadableNotModified). */
  readonly reason: string | undefined;
  constructor(status: number | null, message: string, options?: ErrorOptions & { reason?: string }) {
    super(message, options);
    this.status = status;
    this.reason = options?.reason;
  }
}

/** A repeated GET made conditional: the ledger's key for it, and what the decision reads of its body (kept, then answered on a 304). */
interface Repeated<S extends v.GenericSchema, T> {
  key: string;
  schema: S;
  summarize: (data: v.InferOutput<S>) => T;
}

type Answered = { data: unknown; headers: Readonly<Record<string, string | number | undefined>> };

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

  // A short hash of each token: which token earned a remembered ETag, without keeping the token.
  const tokenKeys = new Map<string, Promise<string>>();
  const keyOf = (token: string): Promise<string> => {
    let known = tokenKeys.get(token);
    if (!known) {
      known = tokenKey(token);
      tokenKeys.set(token, known);
    }
    return known;
  };

  /**
   * A repeated GET, conditional: the remembered ETag (with the token that earned it) or Last-Modified is sent, a 304 answers
   * what the 200 did (its summary), a 200 replaces both, an answer without a validator is not remembered.
   */
  async function readRepeated<S extends v.GenericSchema, T>(
    what: string,
    token: string,
    repeated: Repeated<S, T>,
    send: (headers: Record<string, string>) => Promise<Answered>,
  ): Promise<T> {
    const store = opts.cache.validators;
    const known = store?.recall(repeated.key);
    let summary: { value: T } | undefined;
    let sent: Record<string, string> = {};
    if (known) {
      try {
        summary = { value: JSON.parse(known.summary) as T };
        sent = validatorsToSend(known, token);
      } catch {
        store?.forget(repeated.key);
      }
    }
    let answer: Answered;
    try {
      answer = await send(sent);
    } catch (e) {
      if (!(e instanceof RequestError && e.status === 304)) throw toGithubError(what, e);
      const headers = e.response?.headers ?? {};
      const why =
        unreadableNotModified(sent, headers, Number(headers[NOT_MODIFIED_BODY_BYTES] ?? 0)) ??
        (summary ? undefined : "GitHub answered 304 Not Modified and nothing is remembered for it");
      if (why !== undefined || !summary) {
        store?.forget(repeated.key);
        throw new GithubError(304, `${what}: ${why}`, { cause: e, reason: UNREADABLE_NOT_MODIFIED });
      }
      // Confirmed current: its age starts again (a Last-Modified stays worth sending; an ETag's token still bounds it).
      if (known) store?.remember(repeated.key, { ...known, storedAt: Date.now() });
      return summary.value;
    }
    const read = readAnswer(repeated.schema, answer.data);
    if (!read.ok) throw unreadable(what, read.why);
    const value = repeated.summarize(read.value);
    const validators = validatorsOf(answer.headers);
    if (validators) store?.remember(repeated.key, { token, ...validators, summary: JSON.stringify(value), storedAt: Date.now() });
    else if (known) store?.forget(repeated.key);
    return value;
  }

  /** A repeated REST read as the installation: a 401 (the token was revoked) drops the token and the repository's installation. */
  async function readAs<S extends v.GenericSchema, T>(
    repo: string,
    installationId: number,
    what: string,
    repeated: Repeated<S, T>,
    send: (octokit: Octokit, headers: Record<string, string>) => Promise<Answered>,
  ): Promise<T> {
    const token = await installationToken(installationId);
    const octokit = new (clientFor(String(installationId)))({ auth: token });
    try {
      return await readRepeated(what, await keyOf(token), repeated, (headers) => send(octokit, headers));
    } catch (e) {
      if (e instanceof GithubError && e.status === 401) {
        opts.cache.tokens.delete(installationId);
        opts.cache.memory.forgetInstallation(repo);
      }
      throw e;
    }
  }

  const [ownerOf, nameOf] = [(repo: string) => repo.split("/")[0]!, (repo: string) => repo.split("/")[1]!];
  return { opts, app, installationToken, readAs, readRepeated, ownerOf, nameOf };
}

type Session = ReturnType<typeof openSession>;

/** Which installation covers a repository: remembered, named by the facts, else looked up (App JWT). */
function installationLookup({ opts, app, readRepeated, ownerOf, nameOf }: Session) {
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
      let data: { id: number };
      try {
        // App JWT: a new one may sign each request; its ETag is sent under "app" all the same (at worst GitHub answers 200).
        const repeated = { key: `GET /repos/${repo}/installation`, schema: InstallationAnswer, summarize: (d: { id: number }) => ({ id: d.id }) };
        data = await readRepeated(`looking up the installation for ${repo}`, APP, repeated, (headers) =>
          app.octokit.request("GET /repos/{owner}/{repo}/installation", { owner: ownerOf(repo), repo: nameOf(repo), headers }),
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
function jobReads(session: Session) {
  const { readAs, ownerOf, nameOf } = session;
  const jobsPage = runJobsPageOf(session);
  return {
    async job(repo: string, jobId: number, installationId: number): Promise<GithubJob> {
      const repeated = { key: `GET /repos/${repo}/actions/jobs/${jobId}`, schema: JobAnswer, summarize: toJob };
      return await readAs(repo, installationId, `reading job ${jobId} in ${repo}`, repeated, (octokit, headers) =>
        octokit.request("GET /repos/{owner}/{repo}/actions/jobs/{job_id}", { owner: ownerOf(repo), repo: nameOf(repo), job_id: jobId, headers }),
      );
    },

    async run(repo: string, runId: number, installationId: number): Promise<GithubRun> {
      const repeated = { key: `GET /repos/${repo}/actions/runs/${runId}`, schema: RunAnswer, summarize: toRun };
      return await readAs(repo, installationId, `reading run ${runId} in ${repo}`, repeated, (octokit, headers) =>
        octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}", { owner: ownerOf(repo), repo: nameOf(repo), run_id: runId, headers }),
      );
    },

    /**
     * Finds the job a runner took in a run (latest attempt), paging through the run's jobs.
     * A name can come back within one run: jobs that started before `startedNotBefore` (ms)
     * ran on an earlier runner of that name and are passed over.
     */
    async runnerJob(repo: string, runId: number, runner: string, installationId: number, startedNotBefore?: number): Promise<GithubJob | undefined> {
      for (let page = 1; ; page++) {
        const { jobs, last } = await jobsPage(repo, runId, installationId, page);
        const found = jobs.find(
          (j) => j.runnerName === runner && (startedNotBefore === undefined || !j.startedAt || Date.parse(j.startedAt) >= startedNotBefore),
        );
        if (found) return found;
        if (last) return undefined;
      }
    },
  };
}

/** One page (100 jobs) of a run's latest attempt, and whether it is the last. */
function runJobsPageOf({ readAs, ownerOf, nameOf }: Session) {
  return (repo: string, runId: number, installationId: number, page: number): Promise<{ jobs: GithubJob[]; last: boolean }> => {
    const repeated = {
      key: `GET /repos/${repo}/actions/runs/${runId}/jobs?filter=latest&per_page=100&page=${page}`,
      schema: RunJobsAnswer,
      summarize: (data: v.InferOutput<typeof RunJobsAnswer>) => ({
        jobs: data.jobs.map(toJob),
        last: data.jobs.length < 100 || page * 100 >= data.total_count,
      }),
    };
    return readAs(repo, installationId, `listing the jobs of run ${runId} in ${repo}`, repeated, (octokit, headers) =>
      octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs", {
        owner: ownerOf(repo),
        repo: nameOf(repo),
        run_id: runId,
        filter: "latest",
        per_page: 100,
        page,
        headers,
      }),
    );
  };
}

/** Pages of a run's jobs and of a repository's runs in progress: the reads a recheck shares (as the installation). */
function runListings(session: Session) {
  const { readAs, ownerOf, nameOf } = session;
  return {
    /** One page (100 jobs) of a run's latest attempt: the read that answers for every job of the run at once (src/reaper/recheck-runs.ts). */
    runJobsPage: runJobsPageOf(session),

    /**
     * The first page (100 jobs) of one attempt of a run: a recheck's read of a run still in progress, at the attempt
     * its tracked jobs belong to (src/reaper/recheck-runs.ts). The attempt's endpoint takes no `filter`: it lists that attempt's jobs.
     */
    attemptJobsPage(repo: string, runId: number, attempt: number, installationId: number): Promise<{ jobs: GithubJob[]; last: boolean }> {
      const repeated = {
        key: `GET /repos/${repo}/actions/runs/${runId}/attempts/${attempt}/jobs?per_page=100`,
        schema: RunJobsAnswer,
        summarize: (data: v.InferOutput<typeof RunJobsAnswer>) => ({ jobs: data.jobs.map(toJob), last: data.jobs.length < 100 || data.total_count <= 100 }),
      };
      return readAs(repo, installationId, `listing the jobs of run ${runId} attempt ${attempt} in ${repo}`, repeated, (octokit, headers) =>
        octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs", {
          owner: ownerOf(repo),
          repo: nameOf(repo),
          run_id: runId,
          attempt_number: attempt,
          per_page: 100,
          headers,
        }),
      );
    },

    /**
     * One page (100 runs, newest first) of the repository's runs in progress, each at its latest attempt: the
     * read that answers a recheck "still running" for every tracked job of a listed run (src/reaper/running-runs.ts).
     */
    inProgressRunsPage(repo: string, installationId: number, page: number): Promise<{ runs: ListedRun[]; last: boolean }> {
      const repeated = {
        key: `GET /repos/${repo}/actions/runs?status=in_progress&exclude_pull_requests=true&per_page=100&page=${page}`,
        schema: RunsAnswer,
        summarize: (data: v.InferOutput<typeof RunsAnswer>) => ({
          runs: data.workflow_runs.map((r) => ({ id: r.id, runAttempt: r.run_attempt ?? 1, status: r.status ?? "" })),
          last: data.workflow_runs.length < 100 || page * 100 >= data.total_count,
        }),
      };
      return readAs(repo, installationId, `listing the runs in progress in ${repo}`, repeated, (octokit, headers) =>
        octokit.request("GET /repos/{owner}/{repo}/actions/runs", {
          owner: ownerOf(repo),
          repo: nameOf(repo),
          status: "in_progress",
          exclude_pull_requests: true,
          per_page: 100,
          page,
          headers,
        }),
      );
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

const APP = "app";

/** The first 16 hex digits of the token's SHA-256: enough to tell tokens apart, nothing to use one with. */
async function tokenKey(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  return [...digest.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// @octokit/app warns through console by default; arc-reaper logs its own structured lines.
const quietLog = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
