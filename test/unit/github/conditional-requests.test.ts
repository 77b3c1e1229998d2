// Conditional requests (issue 47) through the real client (src/github/github-client.ts) against a small
// GitHub of this file's own, over fetch: ETags quoted and weak, specific to the token and changing with
// the body, 304 with no body. A recheck answered 304 answers exactly what the 200 did (the same jobs, so
// the same runners reaped and kept); a remembered summary never outlives a changed body; the budget counts
// a 304 as a request and not a counted call; an unreadable 304 is a GitHub error with a reason code.
import { createHash, generateKeyPairSync } from "node:crypto";
import fc from "fast-check";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { countedCalls, newCallBudget } from "../../../src/github/call-budget.ts";
import { UNREADABLE_NOT_MODIFIED, unreadableNotModified, validatorsOf, validatorsToSend } from "../../../src/github/conditional-read.ts";
import { createGithub, GithubError, type GithubJob } from "../../../src/github/github-client.ts";
import { newGithubCache } from "../../../src/github/installation-and-rate-memory.ts";
import type { ClusterView } from "../../../src/model/view.ts";
import { judge } from "../../../src/reaper/judge.ts";
import { decision } from "../support/decision.ts";

const API = "https://api.github.test";
const REPO = "o/r";
const RUN = 10;
const NOW = Date.parse("2026-12-07T12:00:00Z");
const PAGE = `${API}/repos/${REPO}/actions/runs/${RUN}/attempts/1/jobs?per_page=100`;
let privateKey = "";

beforeAll(() => {
  privateKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
});
afterEach(() => {
  vi.unstubAllGlobals();
});

interface WireJob {
  id: number;
  status: "in_progress" | "completed";
  conclusion: string | null;
  completed_at: string | null;
}

/** GitHub as far as these reads go: tokens minted on demand, the attempt's jobs page with ETags per token and body. */
function fakeGithub(jobs: () => WireJob[], misbehave?: (sent: Headers) => Response | undefined) {
  let minted = 0;
  const seen = { ok: 0, notModified: 0 };
  const rate = { remaining: 5000 };
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    const headers = new Headers(init?.headers);
    const rateHeaders = () => ({ "x-ratelimit-limit": "5000", "x-ratelimit-remaining": String(rate.remaining) });
    if (url.endsWith("/access_tokens")) {
      rate.remaining--;
      minted++;
      return Response.json({ token: `ghs_token${minted}`, expires_at: new Date(Date.now() + 3_600_000).toISOString() }, { status: 201 });
    }
    if (url !== PAGE) return Response.json({ message: "Not Found" }, { status: 404 });
    const odd = misbehave?.(headers);
    if (odd) return odd;
    const body = JSON.stringify({ total_count: jobs().length, jobs: jobs().map(wire) });
    const token = headers.get("authorization") ?? "";
    const etag = `W/"${createHash("sha256").update(`${token}\n${body}`).digest("hex").slice(0, 32)}"`;
    if (headers.get("if-none-match") === etag) {
      seen.notModified++;
      return new Response(null, { status: 304, headers: { etag, ...rateHeaders() } });
    }
    rate.remaining--;
    seen.ok++;
    return new Response(body, { status: 200, headers: { "content-type": "application/json; charset=utf-8", etag, ...rateHeaders() } });
  };
  return { fetch, seen, rate };
}

const wire = (j: WireJob) => ({
  id: j.id,
  run_id: RUN,
  run_attempt: 1,
  status: j.status,
  conclusion: j.conclusion,
  started_at: "2026-12-07T10:00:00Z",
  completed_at: j.completed_at,
  runner_name: `arc-x-${j.id}`,
  name: `job ${j.id}`,
});

function client(cache = newGithubCache(), limit = 1000) {
  const budget = newCallBudget(limit);
  const github = createGithub({ apiUrl: API, appId: "1", privateKey, budget, cache });
  return { github, budget, cache, page: () => github.attemptJobsPage(REPO, RUN, 1, 7) };
}

/** What the judge decides for each job's runner, given the page's word on it: reap or keep. */
function decisions(jobs: readonly GithubJob[]): string[] {
  return jobs.map((j) => {
    const cluster: ClusterView = {
      kind: "found",
      runner: { namespace: "arc", name: `arc-x-${j.id}`, uid: `u-${j.id}`, workflowRunId: RUN, jobRepositoryName: REPO },
    };
    const tracked = {
      runner: `arc-x-${j.id}`,
      repo: REPO,
      runId: RUN,
      runAttempt: 1,
      jobId: j.id,
      startedAt: "2026-12-07T10:00:00Z",
      installationId: 7,
      checkedAt: NOW,
    };
    const completed = j.status === "completed" && j.completedAt ? { jobCompletedAt: j.completedAt, jobConclusion: j.conclusion ?? "completed" } : {};
    const word = { kind: "job" as const, status: j.status, conclusion: j.conclusion, completedAt: j.completedAt };
    return `${j.id}:${decision(judge({ tracked: { ...tracked, ...completed }, cluster, github: word, now: NOW, policy: { graceSeconds: 300, maxJobSeconds: 432_000 } }))}`;
  });
}

const jobArb = (id: number) =>
  fc.record({
    id: fc.constant(id),
    status: fc.constantFrom("in_progress" as const, "completed" as const),
    conclusion: fc.constantFrom(null, "success", "cancelled"),
    completed_at: fc.constantFrom(null, "2026-12-07T11:50:00Z", "2026-12-07T11:58:00Z"),
  });
const stepArb = fc.oneof(
  fc.constant({ kind: "read" as const }),
  fc.constant({ kind: "read" as const }),
  fc.constant({ kind: "new-token" as const }),
  fc.record({ kind: fc.constant("change" as const), at: fc.nat(7), job: jobArb(0) }),
);

describe("conditional requests through the client", () => {
  // Seconds alone; far more on a loaded machine, and a timed-out property would go on stubbing fetch under the next test.
  it("a recheck answered 304 gives the runners exactly the decisions the 200 gave, over random runs, bodies, tokens and changes", {
    timeout: 120_000,
  }, async () => {
    let notModifiedSeen = 0;
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 8 })
          .chain((n) => fc.tuple(fc.tuple(...Array.from({ length: n }, (_, i) => jobArb(1000 + i))), fc.array(stepArb, { maxLength: 12 }))),
        async ([initial, steps]) => {
          let jobs: WireJob[] = initial.map((j) => ({ ...j }));
          const gh = fakeGithub(() => jobs);
          vi.stubGlobal("fetch", gh.fetch);
          const conditional = client();
          // Beside it, a client that remembers nothing: every read a 200, GitHub's current word.
          const { validators: _none, ...remembersNothing } = newGithubCache();
          const plain = client(remembersNothing);
          for (const step of [{ kind: "read" as const }, ...steps]) {
            if (step.kind === "change") {
              const i = step.at % jobs.length;
              jobs = jobs.map((j, k) => (k === i ? { ...step.job, id: j.id } : j));
            } else if (step.kind === "new-token") {
              conditional.cache.tokens.clear();
            } else {
              const before = gh.seen.notModified;
              const answered = await conditional.page();
              const truth = await plain.page();
              expect(answered).toEqual(truth);
              expect(decisions(answered.jobs)).toEqual(decisions(truth.jobs));
              notModifiedSeen += gh.seen.notModified - before;
            }
          }
          // The budget: every request made, the 304s among them not counted.
          // The budget: every 304 a request of the conditional client's, none of them counted.
          expect(conditional.budget.notModified).toBe(gh.seen.notModified);
          expect(countedCalls(conditional.budget)).toBe(conditional.budget.used - gh.seen.notModified);
          vi.unstubAllGlobals();
        },
      ),
      { numRuns: 120 },
    );
    // The property held with 304s answering: it was put to the test.
    expect(notModifiedSeen).toBeGreaterThan(40);
  });

  it("a remembered summary never outlives a changed body: the next read is a 200 with the new word, and it is what is remembered", async () => {
    let jobs: WireJob[] = [{ id: 1, status: "in_progress", conclusion: null, completed_at: null }];
    const gh = fakeGithub(() => jobs);
    vi.stubGlobal("fetch", gh.fetch);
    const c = client();
    expect((await c.page()).jobs[0]).toMatchObject({ status: "in_progress" });
    expect((await c.page()).jobs[0]).toMatchObject({ status: "in_progress" });
    expect(gh.seen).toEqual({ ok: 1, notModified: 1 });
    jobs = [{ id: 1, status: "completed", conclusion: "success", completed_at: "2026-12-07T11:58:00Z" }];
    expect((await c.page()).jobs[0]).toMatchObject({ status: "completed", completedAt: "2026-12-07T11:58:00Z" });
    expect((await c.page()).jobs[0]).toMatchObject({ status: "completed" });
    expect(gh.seen).toEqual({ ok: 2, notModified: 2 });
    expect(JSON.parse(c.cache.validators!.recall(`GET /repos/${REPO}/actions/runs/${RUN}/attempts/1/jobs?per_page=100`)!.summary)).toMatchObject({
      jobs: [{ status: "completed" }],
    });
  });

  it("an ETag is sent only with the token that earned it: a new token asks unconditionally and earns its own", async () => {
    const jobs: WireJob[] = [{ id: 1, status: "in_progress", conclusion: null, completed_at: null }];
    const sent: (string | null)[] = [];
    const gh = fakeGithub(
      () => jobs,
      (h) => void sent.push(h.get("if-none-match")),
    );
    vi.stubGlobal("fetch", gh.fetch);
    const c = client();
    await c.page();
    await c.page();
    c.cache.tokens.clear();
    await c.page();
    await c.page();
    expect(sent.map((s) => s !== null)).toEqual([false, true, false, true]);
    expect(sent[1]).not.toBe(sent[3]);
    expect(gh.seen).toEqual({ ok: 2, notModified: 2 });
  });

  it("the budget counts a 304 as a request, not as a counted call; GitHub's remaining limit is read from it unchanged", async () => {
    const jobs: WireJob[] = [{ id: 1, status: "in_progress", conclusion: null, completed_at: null }];
    const gh = fakeGithub(() => jobs);
    vi.stubGlobal("fetch", gh.fetch);
    const c = client();
    await c.page(); // a mint and a 200
    const remaining = c.budget.rateLimitRemaining;
    await c.page(); // a 304
    await c.page(); // a 304
    expect(c.budget.used).toBe(4);
    expect(c.budget.notModified).toBe(2);
    expect(countedCalls(c.budget)).toBe(2);
    expect(c.budget.rateLimitRemaining).toBe(remaining);
  });

  it("a 304 spends the per-sweep cap like any request: with the cap spent none is sent", async () => {
    const jobs: WireJob[] = [{ id: 1, status: "in_progress", conclusion: null, completed_at: null }];
    vi.stubGlobal("fetch", fakeGithub(() => jobs).fetch);
    const cache = newGithubCache();
    const first = client(cache, 2);
    await first.page();
    const second = client(cache, 2);
    await second.page(); // a 304 (the token is cached)
    await second.page();
    await expect(second.page()).rejects.toThrow(/budget of 2 GitHub requests/);
    expect(second.budget).toMatchObject({ used: 2, notModified: 2 });
  });

  describe("an unreadable 304 is a GitHub error with a reason code, never an answer", () => {
    const running: WireJob[] = [{ id: 1, status: "in_progress", conclusion: null, completed_at: null }];
    const rejects = async (c: ReturnType<typeof client>, words: RegExp) => {
      const error = await c.page().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(GithubError);
      expect((error as GithubError).reason).toBe(UNREADABLE_NOT_MODIFIED);
      expect((error as GithubError).message).toMatch(words);
    };

    it("to a request that sent no validator", async () => {
      vi.stubGlobal(
        "fetch",
        fakeGithub(
          () => running,
          () => new Response(null, { status: 304, headers: { etag: 'W/"x"' } }),
        ).fetch,
      );
      await rejects(client(), /304 Not Modified to a request that sent no validator/);
    });

    it("with a body", async () => {
      let conditional = false;
      const gh = fakeGithub(
        () => running,
        (h) => {
          if (!h.has("if-none-match")) return undefined;
          conditional = true;
          // Fetch will not build a 304 with a body; a broken proxy can send one: a 200's body under a 304.
          const odd = new Response('{"jobs":[]}', { status: 200, headers: { etag: h.get("if-none-match")! } });
          Object.defineProperty(odd, "status", { value: 304 });
          return odd;
        },
      );
      vi.stubGlobal("fetch", gh.fetch);
      const c = client();
      await c.page();
      await rejects(c, /304 Not Modified with a body of 11 bytes/);
      expect(conditional).toBe(true);
      // Forgotten: the next read asks unconditionally.
      expect(c.cache.validators!.recall(`GET /repos/${REPO}/actions/runs/${RUN}/attempts/1/jobs?per_page=100`)).toBeUndefined();
    });

    it("naming a validator GitHub never sent", async () => {
      const gh = fakeGithub(
        () => running,
        (h) => (h.has("if-none-match") ? new Response(null, { status: 304, headers: { etag: 'W/"never-sent"' } }) : undefined),
      );
      vi.stubGlobal("fetch", gh.fetch);
      const c = client();
      await c.page();
      await rejects(c, /with ETag W\/"never-sent", not the W\/"[0-9a-f]+" sent/);
    });
  });
});

describe("validators (pure)", () => {
  const remembered = { token: "t1", etag: 'W/"a"', summary: "{}", storedAt: 0 };
  it("sends the ETag only with its token, else the Last-Modified, else nothing", () => {
    expect(validatorsToSend(remembered, "t1")).toEqual({ "if-none-match": 'W/"a"' });
    expect(validatorsToSend(remembered, "t2")).toEqual({});
    expect(validatorsToSend({ ...remembered, lastModified: "Mon, 07 Dec 2026 12:00:00 GMT" }, "t2")).toEqual({
      "if-modified-since": "Mon, 07 Dec 2026 12:00:00 GMT",
    });
    expect(validatorsToSend(undefined, "t1")).toEqual({});
  });

  it("keeps only validators as GitHub writes them: a quoted (weak or strong) ETag, an HTTP date", () => {
    expect(validatorsOf({ etag: 'W/"abc"' })).toEqual({ etag: 'W/"abc"' });
    expect(validatorsOf({ etag: '"abc"', "last-modified": "Mon, 07 Dec 2026 12:00:00 GMT" })).toEqual({
      etag: '"abc"',
      lastModified: "Mon, 07 Dec 2026 12:00:00 GMT",
    });
    expect(validatorsOf({ etag: "abc" })).toBeUndefined();
    expect(validatorsOf({ "last-modified": "yesterday" })).toBeUndefined();
    expect(validatorsOf({})).toBeUndefined();
  });

  it("reads a 304 as the remembered answer only when it can stand for it", () => {
    expect(unreadableNotModified({ "if-none-match": 'W/"a"' }, { etag: 'W/"a"' }, 0)).toBeUndefined();
    expect(unreadableNotModified({ "if-none-match": 'W/"a"' }, { etag: '"a"' }, 0)).toBeUndefined();
    expect(unreadableNotModified({ "if-none-match": 'W/"a"' }, {}, 0)).toBeUndefined();
    expect(unreadableNotModified({ "if-modified-since": "Mon, 07 Dec 2026 12:00:00 GMT" }, {}, 0)).toBeUndefined();
    expect(unreadableNotModified({}, {}, 0)).toMatch(/sent no validator/);
    expect(unreadableNotModified({ "if-none-match": 'W/"a"' }, { etag: 'W/"a"' }, 3)).toMatch(/a body of 3 bytes/);
    expect(unreadableNotModified({ "if-none-match": 'W/"a"' }, { etag: 'W/"b"' }, 0)).toMatch(/not the W\/"a" sent/);
    expect(unreadableNotModified({ "if-modified-since": "Mon, 07 Dec 2026 12:00:00 GMT" }, { etag: 'W/"b"' }, 0)).toMatch(/sent none/);
  });
});
