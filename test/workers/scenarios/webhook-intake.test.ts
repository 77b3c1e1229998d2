import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { pingPayload, workflowJobPayload, workflowRunPayload } from "../support/payloads.ts";
import { factsFromWebhook } from "../../../src/github/facts-from-webhook.ts";
import { adminRunners, call, configureLedger, deliver, ledgerOf, ledgerRows, signedDelivery, testEnv } from "../support/worker.ts";

const REPO = "octo-org/example-workflow";
// Yesterday: facts about jobs older than REAPER_HISTORY_DAYS are not recorded.
const DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
const started = (o: { runner?: string; jobId?: number; runId?: number; runAttempt?: number } = {}) =>
  workflowJobPayload("in_progress", {
    runner: o.runner ?? "arc-runners-abcde-runner-x1",
    jobId: o.jobId ?? 2832853555,
    runId: o.runId ?? 940463255,
    runAttempt: o.runAttempt ?? 1,
    repo: REPO,
    startedAt: `${DAY}T19:22:27Z`,
    installationId: 42,
  });
const completed = (o: { runner?: string; jobId?: number; conclusion?: string } = {}) =>
  workflowJobPayload("completed", {
    runner: o.runner ?? "arc-runners-abcde-runner-x1",
    jobId: o.jobId ?? 2832853555,
    runId: 940463255,
    runAttempt: 1,
    repo: REPO,
    startedAt: `${DAY}T19:22:27Z`,
    completedAt: `${DAY}T19:30:00Z`,
    conclusion: o.conclusion ?? "cancelled",
    installationId: 42,
  });
const runCompleted = () => workflowRunPayload({ repo: REPO, runId: 940463255, runAttempt: 1, updatedAt: `${DAY}T19:31:00Z`, conclusion: "cancelled" });

describe("POST /webhook signature", () => {
  it("accepts a real workflow_job.in_progress payload signed with the secret and records it", async () => {
    const env = testEnv();
    const res = await deliver(env, "workflow_job", started());
    expect(res.status).toBe(202);
    expect(await ledgerRows(env)).toBe(1); // one runner row
    const { runners } = await adminRunners(env);
    expect(runners).toEqual([
      expect.objectContaining({
        name: "arc-runners-abcde-runner-x1",
        state: "running",
        repository: REPO,
        runId: 940463255,
        runAttempt: 1,
        jobId: 2832853555,
        startedAt: `${DAY}T19:22:27Z`,
      }),
    ]);
  });

  it("a job delivered without run_attempt is attempt 0 (unknown), never a guessed attempt 1", () => {
    const payload = started();
    delete (payload["workflow_job"] as Record<string, unknown>)["run_attempt"];
    const outcome = factsFromWebhook("workflow_job", "guid-no-attempt", payload);
    expect(outcome).toMatchObject({ kind: "facts", facts: [expect.objectContaining({ runAttempt: 0 })] });
  });

  it("rejects a payload signed with another secret: 401, nothing recorded", async () => {
    const env = testEnv();
    const res = await call(env, await signedDelivery("workflow_job", started(), { secret: "not-the-secret" }));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: expect.stringContaining("X-Hub-Signature-256 does not match") });
    expect(await ledgerRows(env)).toBe(0);
  });

  it("rejects a missing signature: 401, nothing recorded", async () => {
    const env = testEnv();
    const req = await signedDelivery("workflow_job", started());
    const headers = new Headers(req.headers);
    headers.delete("x-hub-signature-256");
    const res = await call(env, new Request(req.url, { method: "POST", headers, body: await req.text() }));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "X-Hub-Signature-256 header is missing" });
    expect(await ledgerRows(env)).toBe(0);
  });

  it("rejects a body changed after signing: 401, nothing recorded", async () => {
    const env = testEnv();
    const req = await signedDelivery("workflow_job", started());
    const tampered = (await req.text()).replace("arc-runners-abcde-runner-x1", "arc-runners-abcde-runner-x2");
    const res = await call(env, new Request(req.url, { method: "POST", headers: req.headers, body: tampered }));
    expect(res.status).toBe(401);
    expect(await ledgerRows(env)).toBe(0);
  });

  it("a signed delivery it ignores reaches the ledger at once, not at the next 10 s flush: redelivery passes over its GUID", async () => {
    const env = testEnv();
    const guids = ["72d3162e-cc78-11e3-81ab-0000000a0001", "72d3162e-cc78-11e3-81ab-0000000a0002"];
    // Two within a second: the second comes well inside the strangers' counters' 10 s.
    for (const delivery of guids) expect((await deliver(env, "workflow_job", workflowJobPayload("queued", { runner: null }), { delivery })).status).toBe(200);
    const received = await runInDurableObject(ledgerOf(env), (_i, state) =>
      state.storage.sql
        .exec<{ guid: string }>("SELECT guid FROM deliveries_received ORDER BY guid")
        .toArray()
        .map((r) => r.guid),
    );
    expect(received).toEqual(guids);
  });
});

describe("POST /webhook bad input", () => {
  it("answers 413 for a body over 1 MiB, nothing recorded", async () => {
    const env = testEnv();
    const body = JSON.stringify({ ...started(), padding: "x".repeat(1024 * 1024) });
    const res = await call(env, await signedDelivery("workflow_job", null, { body }));
    expect(res.status).toBe(413);
    expect(await ledgerRows(env)).toBe(0);
  });

  it("answers 400 for malformed JSON with a valid signature, nothing recorded", async () => {
    const env = testEnv();
    const res = await call(env, await signedDelivery("workflow_job", null, { body: '{"action": "in_progress",' }));
    expect(res.status).toBe(400);
    expect((await res.json()) as { error: string }).toEqual({ error: expect.stringMatching(/^body is not valid JSON/) });
    expect(await ledgerRows(env)).toBe(0);
  });

  it.each([
    [
      "workflow_job",
      () => {
        const p = started();
        delete (p.workflow_job as Record<string, unknown>).run_id;
        return p;
      },
      "workflow_job.in_progress: run_id must be a positive integer, got nothing",
    ],
    [
      "workflow_job",
      () => {
        const p = started();
        (p.workflow_job as Record<string, unknown>).started_at = "yesterday";
        return p;
      },
      'workflow_job.in_progress: started_at must be a timestamp, got "yesterday"',
    ],
    [
      "workflow_job",
      () => {
        const p = completed();
        (p.workflow_job as Record<string, unknown>).conclusion = null;
        return p;
      },
      "workflow_job.completed: conclusion must be a conclusion, got null",
    ],
    [
      "workflow_job",
      () => {
        const p = started();
        delete p.repository;
        return p;
      },
      "workflow_job.in_progress: repository.full_name must be owner/repo, got nothing",
    ],
    [
      "workflow_job",
      () => {
        const p = started();
        delete p.workflow_job;
        return p;
      },
      "workflow_job.in_progress: workflow_job must be an object, got nothing",
    ],
    [
      "workflow_run",
      () => {
        const p = runCompleted();
        (p.workflow_run as Record<string, unknown>).id = "12";
        return p;
      },
      'workflow_run.completed: id must be a positive integer, got "12"',
    ],
    [
      "workflow_run",
      () => {
        const p = runCompleted();
        delete (p.workflow_run as Record<string, unknown>).updated_at;
        return p;
      },
      "workflow_run.completed: updated_at must be a timestamp, got nothing",
    ],
  ])("answers 400 for %s missing what it needs: %s", async (event, make, message) => {
    const env = testEnv();
    const res = await deliver(env, event, make());
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: message });
    expect(await ledgerRows(env)).toBe(0);
  });

  it("answers 400 for a JSON array body", async () => {
    const res = await deliver(testEnv(), "workflow_job", [1, 2]);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "payload must be a JSON object" });
  });

  it("answers 400 when X-GitHub-Event is missing", async () => {
    const req = await signedDelivery("workflow_job", started());
    const headers = new Headers(req.headers);
    headers.delete("x-github-event");
    const res = await call(testEnv(), new Request(req.url, { method: "POST", headers, body: await req.text() }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "X-GitHub-Event header is missing" });
  });
});

describe("POST /webhook ignores what it does not act on", () => {
  it.each([
    ["ping", pingPayload(), /^ping is not something/],
    ["workflow_job", workflowJobPayload("queued", { runner: null }), /^workflow_job.queued is not something/],
    ["workflow_job", workflowJobPayload("in_progress", { runner: "github-hosted-1", runnerGroup: "GitHub Actions" }), /GitHub-hosted runner/],
    ["workflow_job", workflowJobPayload("completed", { runner: null, conclusion: "cancelled" }), /has no runner/],
    ["workflow_job", workflowJobPayload("in_progress", { runner: "my runner" }), /cannot be an ARC EphemeralRunner name/],
    ["issues", { action: "opened" }, /^issues.opened is not something/],
  ])("%s: 200, nothing recorded", async (event, payload, why) => {
    const env = testEnv();
    const res = await deliver(env, event, payload);
    expect(res.status).toBe(200);
    expect((await res.json()) as { outcome: string; detail: string }).toEqual({ outcome: "ignored", detail: expect.stringMatching(why) });
    expect(await ledgerRows(env)).toBe(0);
  });
});

describe("facts", () => {
  it("writes one runner row per job and one run row per run attempt; a duplicate writes no fact row", async () => {
    const env = testEnv();
    await configureLedger(env);
    const rows: number[] = [];
    for (const [i, [event, payload]] of (
      [
        ["workflow_job", started()],
        ["workflow_job", completed()],
        ["workflow_run", runCompleted()],
        ["workflow_job", completed()],
      ] as const
    ).entries()) {
      const outcome = factsFromWebhook(event, `guid-${i}`, payload);
      if (outcome.kind !== "facts") throw new Error(`expected facts, got ${outcome.kind}`);
      const receipt = await ledgerOf(env).receive({ event, guid: `guid-${i}`, facts: outcome.facts });
      rows.push(receipt.changed);
    }
    expect(rows).toEqual([1, 1, 1, 0]); // the job's row changed by each fact once; the duplicate changed nothing
    expect(await ledgerRows(env)).toBe(2); // the runner's row and the run's row
  });

  it("every order of in_progress, job completed and run completed, with duplicates, gives one identical listing", async () => {
    const deliveries: [string, Record<string, unknown>][] = [
      ["workflow_job", started()],
      ["workflow_job", completed()],
      ["workflow_run", runCompleted()],
    ];
    const orders = [
      [0, 1, 2],
      [0, 2, 1],
      [1, 0, 2],
      [1, 2, 0],
      [2, 0, 1],
      [2, 1, 0],
      [2, 2, 1, 0, 1, 0],
    ];
    const listings: unknown[] = [];
    for (const order of orders) {
      const env = testEnv();
      for (const i of order) {
        const [event, payload] = deliveries[i]!;
        expect((await deliver(env, event, payload)).status).toBe(202);
      }
      const { runners } = await adminRunners(env);
      // dueAt and the reason's "Ns ago" move with the clock; the rest must be identical.
      listings.push(runners.map(({ reason: _r, ...rest }) => rest));
    }
    for (const listing of listings) expect(listing).toEqual(listings[0]);
    expect(listings[0]).toEqual([
      {
        name: "arc-runners-abcde-runner-x1",
        state: "finished",
        repository: REPO,
        runId: 940463255,
        runAttempt: 1,
        jobId: 2832853555,
        startedAt: `${DAY}T19:22:27Z`,
        completedAt: `${DAY}T19:30:00Z`,
        conclusion: "cancelled",
        dueAt: `${DAY}T19:35:00.000Z`,
        cluster: null, // no object seen doing the job yet
        namespace: null,
        uid: null,
        decidedAt: null,
        closedAt: null,
        cause: null,
        prunedAt: null,
        code: null, // never judged: the facts' own schedule
        // The job's completion names the job and its workflow; the run alone gives its page: the same in every order.
        workflow: "CodeQL",
        job: "linters",
        branch: "main",
        runUrl: "https://github.com/octo-org/octo-repo/actions/runs/940463255",
      },
    ]);
  });

  it("a run completion covers only jobs of that attempt or an earlier one", async () => {
    const env = testEnv();
    await deliver(env, "workflow_job", started({ runner: "arc-runners-abcde-runner-r2", jobId: 77, runAttempt: 2 }));
    await deliver(env, "workflow_run", runCompleted()); // attempt 1
    const { runners } = await adminRunners(env);
    expect(runners).toEqual([expect.objectContaining({ name: "arc-runners-abcde-runner-r2", state: "running" })]);
  });
});

describe("POST /webhook signature header shapes", () => {
  it.each([
    ["sha1, not sha256", (hex: string) => `sha1=${hex.slice(0, 40)}`],
    ["too short", (hex: string) => `sha256=${hex.slice(0, 62)}`],
    ["not hex", (hex: string) => `sha256=${"z".repeat(64)}${hex.slice(64)}`],
    ["one digit off", (hex: string) => `sha256=${hex.slice(0, 63)}${hex[63] === "0" ? "1" : "0"}`],
  ])("refuses a signature that is %s: 401, nothing recorded", async (_what, change) => {
    const env = testEnv();
    const req = await signedDelivery("workflow_job", started());
    const headers = new Headers(req.headers);
    headers.set("x-hub-signature-256", change(headers.get("x-hub-signature-256")!.slice("sha256=".length)));
    const res = await call(env, new Request(req.url, { method: "POST", headers, body: await req.text() }));
    expect(res.status).toBe(401);
    expect(await ledgerRows(env)).toBe(0);
  });

  it("accepts the signature in upper-case hex, as the same bytes", async () => {
    const env = testEnv();
    const req = await signedDelivery("workflow_job", started());
    const headers = new Headers(req.headers);
    headers.set("x-hub-signature-256", `sha256=${headers.get("x-hub-signature-256")!.slice("sha256=".length).toUpperCase()}`);
    expect((await call(env, new Request(req.url, { method: "POST", headers, body: await req.text() }))).status).toBe(202);
  });
});
