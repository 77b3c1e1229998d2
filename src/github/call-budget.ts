import { fetchWithTimeout } from "../net/fetch-with-timeout.ts";

// Every request to GitHub counts against REAPER_MAX_GITHUB_CALLS_PER_MINUTE:
// token mints, installation look-ups, the deliveries listing and REST reads
// alike. The budget is checked before a request is sent, never after. A 304
// (a conditional request whose answer did not change) is a request like any
// other for the per-sweep cap and GitHub's secondary limits, and is not
// counted against the primary rate limit: `used` counts both, `notModified`
// the 304s among them (countedCalls: what GitHub counts).

/**
 * The longest GitHub's word can switch a scope off: a Retry-After or x-ratelimit-reset beyond it
 * (a hostile or broken proxy in front of GHES) is read as an hour, and asked again then.
 */
export const MAX_BACKOFF_MS = 3_600_000;

export class GithubBudgetExhausted extends Error {}
export class GithubRateLimited extends Error {}

export interface CallBudget {
  readonly limit: number;
  used: number;
  /** Of `used`, the requests GitHub answered 304 Not Modified: not counted against its primary rate limit. */
  notModified: number;
  /** The rate limit GitHub reported last, for the metrics. */
  rateLimitRemaining: number | null;
  rateLimitLimit: number | null;
}

/** When GitHub said to back off, for one scope (the App, or one installation); kept in the ledger. */
export interface RateLimitState {
  blockedUntil(): number; // ms since epoch
  block(until: number): void;
}

export function newCallBudget(limit: number): CallBudget {
  return { limit, used: 0, notModified: 0, rateLimitRemaining: null, rateLimitLimit: null };
}

/** The requests GitHub counts against the primary rate limit: every answer but a 304 (200s, errors, requests that got no answer). */
export function countedCalls(budget: Pick<CallBudget, "used" | "notModified">): number {
  return budget.used - budget.notModified;
}

/** A header of our own on a 304 handed to the client: how many bytes of body came with it (GitHub sends none). */
export const NOT_MODIFIED_BODY_BYTES = "x-arc-reaper-304-body-bytes";

/** A fetch that spends the budget, honours Retry-After / x-ratelimit-reset, and times out. */
export function budgetedFetch(budget: CallBudget, rate: RateLimitState, timeoutMs: number): typeof fetch {
  return async (input, init) => {
    const now = Date.now();
    let blockedUntil = rate.blockedUntil();
    if (blockedUntil > now + MAX_BACKOFF_MS) {
      // Kept before the cap existed: an hour from now, written once.
      blockedUntil = now + MAX_BACKOFF_MS;
      rate.block(blockedUntil);
    }
    if (blockedUntil > now) {
      throw new GithubRateLimited(`GitHub asked us to wait until ${new Date(blockedUntil).toISOString()}`);
    }
    if (budget.used >= budget.limit) {
      throw new GithubBudgetExhausted(`the budget of ${budget.limit} GitHub requests for this sweep is spent`);
    }
    budget.used++;
    // The whole answer is read inside the deadline, then handed on as a fresh Response.
    const response = await fetchWithTimeout(input, init ?? {}, timeoutMs, readWhole);
    if (response.status === 304) budget.notModified++;
    const remaining = response.headers.get("x-ratelimit-remaining");
    if (remaining !== null && /^\d+$/.test(remaining)) budget.rateLimitRemaining = Number(remaining);
    const limit = response.headers.get("x-ratelimit-limit");
    if (limit !== null && /^\d+$/.test(limit)) budget.rateLimitLimit = Number(limit);
    const asked = await backOffUntil(response, now);
    const backOff = asked === null ? null : Math.min(asked, now + MAX_BACKOFF_MS);
    if (backOff !== null) {
      // A rate limit is a back-off, never an answer: no caller may read it as "not installed" or "not found".
      rate.block(backOff);
      throw new GithubRateLimited(`GitHub answered ${response.status}, a rate limit: waiting until ${new Date(backOff).toISOString()}`);
    }
    return response;
  };
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/** The whole answer as a fresh Response; a 304's body, which GitHub never sends, is measured for the client to refuse. */
async function readWhole(r: Response): Promise<Response> {
  if (r.status !== 304) return new Response(NULL_BODY.has(r.status) ? null : await r.arrayBuffer(), r);
  const bytes = r.body ? (await r.arrayBuffer()).byteLength : 0;
  const headers = new Headers(r.headers);
  headers.set(NOT_MODIFIED_BODY_BYTES, String(bytes));
  return new Response(null, { status: 304, statusText: r.statusText, headers });
}
const SECONDARY_LIMIT = /secondary rate limit|abuse detection/i;

async function backOffUntil(response: Response, now: number): Promise<number | null> {
  if (response.status !== 429 && response.status !== 403) return null;
  const retryAfter = response.headers.get("retry-after");
  if (retryAfter !== null && /^\d+$/.test(retryAfter)) return now + Number(retryAfter) * 1000;
  if (response.headers.get("x-ratelimit-remaining") === "0") {
    const reset = response.headers.get("x-ratelimit-reset");
    // The primary limit: until it resets (at least a minute when GitHub did not say when).
    return reset !== null && /^\d+$/.test(reset) ? Math.max(Number(reset) * 1000, now + 1000) : now + 60_000;
  }
  // A 429, or a 403 that says it is a secondary limit, without a hint: GitHub asks for at least a minute.
  if (response.status === 429) return now + 60_000;
  const body = await response
    .clone()
    .text()
    .catch(() => "");
  return SECONDARY_LIMIT.test(body) ? now + 60_000 : null;
}
