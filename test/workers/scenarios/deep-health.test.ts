// GET /healthz/deep against the stand-ins: each namespace listed under the
// reaper's Role, a token minted for each installation the ledger knows, the
// deliveries listed; 200 when every check passed, else 503 naming what failed.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { WorkerEnv } from "../../../src/durable/ledger-for.ts";
import { before, INSTALLATION, NS, REPO, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, call, configureLedger, ledgerOf } from "../support/worker.ts";

const TOKEN = "reaper-sa-token-from-the-secret";
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const deep = (env: WorkerEnv, headers: Record<string, string> = bearer) => call(env, new Request("https://arc-reaper.test/healthz/deep", { headers }));

interface Health {
  ok: boolean;
  checks: { name: string; ok: boolean; detail: string }[];
}

/** A stack whose KUBE_TOKEN is the reaper's ServiceAccount under the Role of infra/kubernetes (arc-runners only). */
async function underRole(namespaces: string) {
  const s = await stack({ REAPER_NAMESPACES: namespaces });
  const rbac = inject("reaperRbac");
  await s.kube.addServiceAccount({ ...rbac.serviceAccount, token: TOKEN, bindings: rbac.bindings });
  s.env.KUBE_TOKEN = TOKEN; // before the first call: the ledger takes the env's settings then
  return s;
}

describe("GET /healthz/deep", () => {
  it("answers 200 when the namespaces list, the known installation mints a token and the deliveries list", async () => {
    const s = await underRole(NS);
    await s.runner({ name: "arc-runners-abcde-runner-h1", workflowRunId: 1 });
    await s.github.addDelivery({ guid: "22222222-aaaa-11e3-81ab-000000000001", event: "workflow_job", action: "completed", statusCode: 202 });
    // The ledger learns the installation from a delivery.
    expect((await s.jobStarted({ runner: "arc-runners-abcde-runner-h1", runId: 1, jobId: 10, startedAt: before(Date.now(), 60) })).status).toBe(202);
    const res = await deep(s.env);
    const body = (await res.json()) as Health;
    expect(body).toEqual({
      ok: true,
      checks: [
        { name: `namespace ${NS}`, ok: true, detail: `listed 1 EphemeralRunner in ${NS} as Tables` },
        { name: `installation ${INSTALLATION}`, ok: true, detail: `minted a token for installation ${INSTALLATION} (${REPO})` },
        { name: "deliveries", ok: true, detail: "listed 1 webhook delivery (one page)" },
        { name: "runner ids", ok: true, detail: expect.stringMatching(/^ARC's runner ids not yet seen matching/) },
        { name: "cluster identity", ok: true, detail: expect.any(String) },
        { name: "sweep", ok: true, detail: "no sweep has completed yet; sweeps are driven by the cron trigger every minute (Cloudflare)" },
      ],
    });
    expect(res.status).toBe(200);
    expect((await s.github.tokenRequests()).map((t) => t.installationId)).toEqual([INSTALLATION]);
  });

  it("lists the settings under their old names as warnings (the first test's body has none)", async () => {
    const s = await underRole(NS);
    // Before the first call, as KUBE_TOKEN above: the old name alone.
    delete s.env.REAPER_MAX_DELETIONS_PER_MINUTE;
    s.env.REAPER_MAX_DELETIONS_PER_SWEEP = "5";
    const body = (await (await deep(s.env)).json()) as Health & { warnings?: string[] };
    expect(body.warnings).toEqual([expect.stringMatching(/^REAPER_MAX_DELETIONS_PER_SWEEP is the old name of REAPER_MAX_DELETIONS_PER_MINUTE /)]);
    expect(body.checks.map((c) => c.name)).toEqual([`namespace ${NS}`, "installations", "deliveries", "runner ids", "cluster identity", "sweep"]);
  });

  it("says which cap holds when both names of one are set and differ (the stricter)", async () => {
    const s = await underRole(NS);
    s.env.REAPER_MAX_DELETIONS_PER_MINUTE = "50";
    s.env.REAPER_MAX_DELETIONS_PER_SWEEP = "2";
    const body = (await (await deep(s.env)).json()) as Health & { warnings?: string[] };
    expect(body.warnings).toEqual([
      "REAPER_MAX_DELETIONS_PER_SWEEP=2 and REAPER_MAX_DELETIONS_PER_MINUTE=50 are both set and differ: the stricter, 2, holds (a cap never loosens on upgrade); set REAPER_MAX_DELETIONS_PER_MINUTE alone",
    ]);
  });

  it("answers 503 naming a namespace outside the Role and a refused token, and still reports what worked", async () => {
    const s = await underRole(`${NS},other-runners`);
    expect((await s.jobStarted({ runner: "arc-runners-abcde-runner-h2", runId: 2, jobId: 20, startedAt: before(Date.now(), 60) })).status).toBe(202);
    await s.github.setRefuseTokens(403);
    const res = await deep(s.env);
    expect(res.status).toBe(503);
    const body = (await res.json()) as Health;
    expect(body.ok).toBe(false);
    expect(body.checks).toEqual([
      { name: `namespace ${NS}`, ok: true, detail: `listed 0 EphemeralRunners in ${NS} as Tables` },
      { name: "namespace other-runners", ok: false, detail: expect.stringMatching(/^listing ephemeralrunners in other-runners: .*403.*cannot list/s) },
      {
        name: `installation ${INSTALLATION}`,
        ok: false,
        detail: expect.stringMatching(new RegExp(`^minting a token for installation ${INSTALLATION}: GitHub answered 403: .*Actions: read`)),
      },
      { name: "deliveries", ok: true, detail: expect.stringMatching(/^listed \d+ webhook deliver/) },
      { name: "runner ids", ok: true, detail: expect.stringMatching(/^ARC's runner ids not yet seen matching/) },
      { name: "cluster identity", ok: true, detail: expect.any(String) },
      { name: "sweep", ok: true, detail: expect.stringMatching(/^no sweep has completed yet/) },
    ]);
  });

  it("names installations the ledger remembers for repositories, and a deliveries listing GitHub refuses", async () => {
    const s = await stack();
    await s.github.addFault({ match: { pathIncludes: "/app/hook/deliveries" }, status: 500, message: "boom" });
    await configureLedger(s.env);
    await runInDurableObject(
      ledgerOf(s.env),
      (_i, state) => void state.storage.sql.exec("INSERT INTO memory (key, value) VALUES ('installation/octo-org/octo-repo', ?)", String(INSTALLATION)),
    );
    const res = await deep(s.env);
    expect(res.status).toBe(503);
    const body = (await res.json()) as Health;
    expect(body.checks.slice(1)).toEqual([
      { name: `installation ${INSTALLATION}`, ok: true, detail: `minted a token for installation ${INSTALLATION} (octo-org/octo-repo)` },
      { name: "deliveries", ok: false, detail: expect.stringMatching(/^listing webhook deliveries: GitHub answered 500/) },
      { name: "runner ids", ok: true, detail: expect.stringMatching(/^ARC's runner ids not yet seen matching/) },
      { name: "cluster identity", ok: true, detail: expect.any(String) },
      { name: "sweep", ok: true, detail: expect.stringMatching(/^no sweep has completed yet/) },
    ]);
  });

  it("says when no installation is known yet, and in agent mode that no agent is connected", async () => {
    const s = await stack({ CLUSTER_MODE: "agent", AGENT_TOKEN: "agent-token-0123456789abcdef0123456789" });
    const res = await deep(s.env);
    expect(res.status).toBe(503);
    const body = (await res.json()) as Health;
    expect(body.checks.slice(0, 2)).toEqual([
      { name: `namespace ${NS} (the agent's view)`, ok: false, detail: expect.stringMatching(/no agent is connected/) },
      { name: "installations", ok: true, detail: "no installation known yet: the ledger learns them from webhooks" },
    ]);
  });

  it("in agent mode with AGENT_CLUSTERS, names each cluster's namespaces and which expected cluster has no agent", async () => {
    const s = await stack({ CLUSTER_MODE: "agent", AGENT_TOKEN: "agent-token-0123456789abcdef0123456789", AGENT_CLUSTERS: "eu-west,us-east" });
    const res = await deep(s.env);
    expect(res.status).toBe(503);
    const body = (await res.json()) as Health;
    expect(body.checks.slice(0, 2)).toEqual([
      { name: `cluster eu-west namespace ${NS} (the agent's view)`, ok: false, detail: expect.stringMatching(/no agent of cluster eu-west is connected/) },
      { name: `cluster us-east namespace ${NS} (the agent's view)`, ok: false, detail: expect.stringMatching(/no agent of cluster us-east is connected/) },
    ]);
    expect(body.checks).toContainEqual({
      name: "agent clusters",
      ok: false,
      detail: "AGENT_CLUSTERS expects eu-west, us-east; no agent connected for eu-west, us-east",
    });
  });

  it("spends its GitHub calls from the window the sweep and the alarm share: never more than the cap in 60 s", async () => {
    const s = await stack({ REAPER_MAX_GITHUB_CALLS_PER_MINUTE: "2" });
    expect((await s.jobStarted({ runner: "arc-runners-abcde-runner-h3", runId: 3, jobId: 30, startedAt: before(Date.now(), 60) })).status).toBe(202);
    await deep(s.env); // a token minted for the installation, the deliveries listed: the cap of 2
    expect(await s.github.calls()).toHaveLength(2);
    const again = (await (await deep(s.env)).json()) as Health;
    expect(await s.github.calls()).toHaveLength(2);
    expect(
      again.checks.filter((c) => !c.name.startsWith("namespace") && c.name !== "runner ids" && c.name !== "cluster identity" && c.name !== "sweep"),
    ).toEqual([
      { name: `installation ${INSTALLATION}`, ok: false, detail: expect.stringMatching(/budget of 0 GitHub requests/) },
      { name: "deliveries", ok: false, detail: expect.stringMatching(/budget of 0 GitHub requests/) },
    ]);
    // A sweep within the minute asks GitHub nothing either.
    await s.sweep();
    expect(await s.github.calls()).toHaveLength(2);
  });

  it("needs the admin bearer token", async () => {
    const s = await stack();
    expect((await deep(s.env, {})).status).toBe(401);
    expect((await deep(s.env, { authorization: "Bearer wrong-token-wrong-token" })).status).toBe(401);
  });
});
