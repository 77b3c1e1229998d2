// Many clusters, one App (issue 17): an agent per cluster dials in with its own
// token, the ledger keeps one view per cluster, orders go only to the agent of
// the runner's cluster, and an agent away holds only its own cluster's runners.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RETIRED_AFTER_MS } from "../../../src/agent-link/agent-link.ts";
import { CLOSE_REPLACED } from "../../../src/cluster/agent-protocol.ts";
import { clusterToken } from "../../../src/http/agent-token.ts";
import { AGENT_TOKEN, agentEnv, completed, connect, dial, REPO, runner, type Agent } from "../support/fake-agent.ts";
import { before, NS, stack } from "../support/stack.ts";
import { adminRunners, call, configureLedger, evictLedger, ledgerOf, runScheduled, settleAlarms } from "../support/worker.ts";
import { SCHEMA_VERSION } from "../../../src/ledger/schema.ts";
import { waitFor } from "../support/wait-for.ts";

const EU = "eu-west";
const US = "us-east";
const SCALE_SET = "arc-runners-abcde"; // ARC's HA layout: the same scale set name in both clusters

async function metrics(env: ReturnType<typeof agentEnv>): Promise<string> {
  return (await call(env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } }))).text();
}

async function clusterAgent(env: ReturnType<typeof agentEnv>, cluster: string, runners: ReturnType<typeof runner>[]): Promise<Agent> {
  const agent = await connect(env, { cluster, token: await clusterToken(AGENT_TOKEN, cluster) });
  agent.send({ type: "snapshot", id: `${cluster}-s1`, part: 1, parts: 1, runners });
  await waitFor(`cluster ${cluster}'s whole view`, async () => (await ledgerOf(env).agentStatus(cluster)).complete);
  return agent;
}

const rowOf = async (env: ReturnType<typeof agentEnv>, name: string) => (await adminRunners(env)).runners.find((r) => r.name === name);

describe("agent tokens, one per cluster", () => {
  it("is the hex HMAC-SHA256 of the cluster's name keyed with AGENT_TOKEN (what openssl dgst -hmac makes)", async () => {
    // RFC 4231-style known answer: HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog").
    expect(await clusterToken("key", "The quick brown fox jumps over the lazy dog")).toBe("f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
    // printf %s eu-west | openssl dgst -sha256 -hmac "$AGENT_TOKEN" | sed 's/^.*= //'
    expect(await clusterToken(AGENT_TOKEN, EU)).toBe("5f6063cdac32b100ba94a8d89d0ce898833107ab69fc0cc4733667980eb04add");
  });

  it("admits its own cluster only; AGENT_TOKEN admits only default; refusals are 401 before the upgrade, counted, never logged with the token", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US}` });
    const euToken = await clusterToken(AGENT_TOKEN, EU);
    const refused: Record<string, string>[] = [
      { "x-arc-reaper-cluster": US, authorization: `Bearer ${euToken}` }, // another cluster's token
      { authorization: `Bearer ${euToken}` }, // no cluster named: default, which only AGENT_TOKEN admits
      { "x-arc-reaper-cluster": EU, authorization: `Bearer ${AGENT_TOKEN}` }, // the Worker's secret is not a named cluster's token
      { "x-arc-reaper-cluster": "Not_A_Label", authorization: `Bearer ${AGENT_TOKEN}` },
      { "x-arc-reaper-cluster": "unlisted", authorization: `Bearer ${euToken}` },
    ];
    const logged: string[] = [];
    const original = console.log;
    console.log = (...args: unknown[]) => logged.push(args.map(String).join(" "));
    try {
      for (const headers of refused) {
        const res = await dial(env, { upgrade: "websocket", ...headers });
        expect(res.status, JSON.stringify(headers)).toBe(401);
        expect(res.webSocket).toBeNull();
        const cluster = headers["x-arc-reaper-cluster"] ?? "default";
        expect(await res.json()).toEqual({
          error:
            cluster === "Not_A_Label"
              ? "x-arc-reaper-cluster must be a cluster name (DNS label)"
              : `a valid agent token for cluster ${cluster} is required (AGENT_TOKEN admits only default; another cluster needs the token made for it)`,
        });
      }
    } finally {
      console.log = original;
    }
    expect(logged.filter((l) => l.includes('"agent refused"'))).toHaveLength(refused.length);
    expect(logged.join("\n")).not.toContain(euToken);
    expect(logged.join("\n")).not.toContain(AGENT_TOKEN);
    const text = await waitFor("the refusals counted", async () => {
      const t = await metrics(env);
      return t.includes('arc_reaper_agent_refusals_total{cluster="other"} 2') ? t : undefined;
    });
    expect(text).toContain(`arc_reaper_agent_refusals_total{cluster="${US}"} 1`);
    expect(text).toContain('arc_reaper_agent_refusals_total{cluster="default"} 1');
    expect(text).toContain(`arc_reaper_agent_refusals_total{cluster="${EU}"} 1`);
    expect(text).toContain('arc_reaper_agent_refusals_total{cluster="other"} 2');

    // Each token opens its own cluster; AGENT_TOKEN still opens default (a single-cluster install, unchanged).
    const eu = await connect(env, { cluster: EU, token: euToken });
    const plain = await connect(env);
    await waitFor(
      "both agents connected",
      async () => (await ledgerOf(env).agentStatus(EU)).connected && (await ledgerOf(env).agentStatus("default")).connected,
    );
    expect(await ledgerOf(env).agentStatus(EU)).toMatchObject({ cluster: EU, connected: true });
    expect(await ledgerOf(env).agentStatus("default")).toMatchObject({ cluster: "default", connected: true });
    eu.ws.close(1000, "done");
    plain.ws.close(1000, "done");
  });

  it("treats surrounding whitespace in AGENT_TOKEN as the agent does: dropped", async () => {
    const env = agentEnv({ AGENT_TOKEN: `  ${AGENT_TOKEN}\n` });
    const eu = await connect(env, { cluster: EU, token: await clusterToken(AGENT_TOKEN, EU) });
    eu.ws.close(1000, "done");
  });

  it("a hello that names another cluster than the one its token was checked for closes the socket", async () => {
    const env = agentEnv();
    const eu = await connect(env, { cluster: EU, token: await clusterToken(AGENT_TOKEN, EU) });
    eu.send({ type: "hello", version: "0.1.0", namespaces: [NS], dryRun: false, cluster: US });
    expect((await eu.closed).code).toBe(1008);
  });
});

describe("two clusters, one ledger", () => {
  it("ARC's HA layout: the same scale set in both clusters, each job reaped in its own cluster, no order to the other", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US}` });
    const [inEu, inUs] = [`${SCALE_SET}-runner-eu001`, `${SCALE_SET}-runner-us001`];
    const eu = await clusterAgent(env, EU, [runner(inEu, { workflowRunId: 601, jobRepositoryName: REPO }), runner(`${SCALE_SET}-runner-eu002`)]);
    const us = await clusterAgent(env, US, [runner(inUs, { workflowRunId: 602, jobRepositoryName: REPO }), runner(`${SCALE_SET}-runner-us002`)]);
    await completed(env, inEu, 601);
    await settleAlarms(env);
    expect(eu.orders.map((o) => o.name)).toEqual([inEu]);
    expect(us.orders).toEqual([]);
    // A fresh instance (hibernation): each socket's cluster rides on its tags and attachment.
    await evictLedger(env);
    expect(await ledgerOf(env).agentStatus(US)).toMatchObject({ cluster: US, connected: true, complete: true, runners: 2 });
    await completed(env, inUs, 602);
    await settleAlarms(env);
    expect(eu.orders.map((o) => o.name)).toEqual([inEu]);
    expect(us.orders.map((o) => o.name)).toEqual([inUs]);
    expect(await rowOf(env, inEu)).toMatchObject({ state: "reaped", cluster: EU });
    expect(await rowOf(env, inUs)).toMatchObject({ state: "reaped", cluster: US });
    const text = await metrics(env);
    expect(text).toContain(`arc_reaper_agent_connected{cluster="${EU}"} 1`);
    expect(text).toContain(`arc_reaper_agent_connected{cluster="${US}"} 1`);
    expect(text).toContain(`arc_reaper_cluster_deletions_total{cluster="${EU}"} 1`);
    expect(text).toContain(`arc_reaper_cluster_deletions_total{cluster="${US}"} 1`);
    eu.ws.close(1000, "done");
    us.ws.close(1000, "done");
  });

  it("twins across clusters: the one busy on the facts' run is reaped, the idle twin never; twins that carry no run are kept", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US}` });
    const [twin, idleTwins] = [`${SCALE_SET}-runner-twin1`, `${SCALE_SET}-runner-twin2`];
    const eu = await clusterAgent(env, EU, [
      runner(twin, { uid: "eu-twin1", workflowRunId: 701, jobRepositoryName: REPO }),
      runner(idleTwins, { uid: "eu-twin2" }),
    ]);
    const us = await clusterAgent(env, US, [runner(twin, { uid: "us-twin1" }), runner(idleTwins, { uid: "us-twin2" })]);
    await completed(env, twin, 701);
    await completed(env, idleTwins, 702);
    await settleAlarms(env);
    await runScheduled(env, Date.now());
    await runScheduled(env, Date.now() + 60_000);
    expect(eu.orders.map((o) => [o.name, o.uid])).toEqual([[twin, "eu-twin1"]]);
    expect(us.orders).toEqual([]);
    expect(await rowOf(env, twin)).toMatchObject({ state: "reaped", cluster: EU });
    // Neither twin carries run 702: neither is its runner, and neither is ever deleted on its facts.
    expect(await rowOf(env, idleTwins)).toMatchObject({ state: "finished", code: "CannotJudge" });
    eu.ws.close(1000, "done");
    us.ws.close(1000, "done");
  });

  it("one agent away: its cluster's runners are held (kind agent), the other cluster is reaped; its return makes them due at once", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US}` });
    const [inEu, inUs] = [`${SCALE_SET}-runner-eu003`, `${SCALE_SET}-runner-us003`];
    const eu = await clusterAgent(env, EU, [runner(inEu, { workflowRunId: 801, jobRepositoryName: REPO })]);
    const us = await clusterAgent(env, US, [runner(inUs, { workflowRunId: 802, jobRepositoryName: REPO })]);
    us.ws.close(1000, "maintenance");
    await us.closed;
    await waitFor("the ledger to see us-east's agent gone", async () => !(await ledgerOf(env).agentStatus(US)).connected);
    expect(await ledgerOf(env).agentStatus(US)).toMatchObject({ connected: false });

    await completed(env, inEu, 801);
    await completed(env, inUs, 802);
    await settleAlarms(env);
    await runScheduled(env, Date.now());
    expect(eu.orders.map((o) => o.name)).toEqual([inEu]);
    expect(await rowOf(env, inEu)).toMatchObject({ state: "reaped", cluster: EU });
    expect(await rowOf(env, inUs)).toMatchObject({ state: "finished", code: "CannotJudge" }); // held: its agent is away
    const text = await metrics(env);
    expect(text).toContain(`arc_reaper_agent_connected{cluster="${US}"} 0`);
    expect(text).toMatch(/arc_reaper_errors_total\{kind="agent"\} [1-9]/);

    // The US agent returns: its snapshot releases what it held, and the alarm (not the cron) reaps it.
    const back = await clusterAgent(env, US, [runner(inUs, { workflowRunId: 802, jobRepositoryName: REPO })]);
    await settleAlarms(env);
    expect(back.orders.map((o) => o.name)).toEqual([inUs]);
    expect(eu.orders).toHaveLength(1);
    expect(await rowOf(env, inUs)).toMatchObject({ state: "reaped", cluster: US });
    eu.ws.close(1000, "done");
    back.ws.close(1000, "done");
  });

  it("a second agent for one cluster replaces that cluster's only; what the replaced socket still sends is ignored", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US}` });
    const eu = await clusterAgent(env, EU, [runner(`${SCALE_SET}-runner-eu004`)]);
    const us1 = await clusterAgent(env, US, [runner(`${SCALE_SET}-runner-us004`)]);
    const us2 = await clusterAgent(env, US, [runner(`${SCALE_SET}-runner-us005`), runner(`${SCALE_SET}-runner-us006`)]);
    expect((await us1.closed).code).toBe(CLOSE_REPLACED);
    // A late part from the replaced connection never empties the new one's view.
    try {
      us1.send({ type: "snapshot", id: "late", part: 1, parts: 1, runners: [] });
    } catch {
      // already closed on this side
    }
    // A barrier on the new connection: its upsert is in, and the view it joined still holds both runners.
    us2.send({ type: "upsert", runner: runner(`${SCALE_SET}-runner-us007`) });
    await waitFor("the new connection's upsert", async () => (await ledgerOf(env).agentStatus(US)).runners !== 2);
    expect(await ledgerOf(env).agentStatus(US)).toMatchObject({ connected: true, complete: true, runners: 3 });
    expect(await ledgerOf(env).agentStatus(EU)).toMatchObject({ connected: true, complete: true, runners: 1 });
    eu.ws.close(1000, "done");
    us2.ws.close(1000, "done");
  });
});

describe("a row's known cluster (issue 22)", () => {
  /** A finished row seen busy in ap-south (not in AGENT_CLUSTERS), whose agent left `leftMsAgo` ago (undefined: never seen leaving). */
  async function apSouthRow(env: ReturnType<typeof agentEnv>, leftMsAgo: number | undefined): Promise<string> {
    await configureLedger(env);
    const name = `${SCALE_SET}-runner-ap001`;
    const longAgo = Date.now() - 3_600_000;
    await runInDurableObject(ledgerOf(env), (_i, state) => {
      state.storage.sql.exec(
        "INSERT INTO runners (runner, job_id, repo, run_id, run_attempt, started_at, job_completed_at, job_conclusion, uid, namespace, cluster, state, reason, due_at, fact_at, story) VALUES (?, 1, ?, 1, 1, ?, ?, 'success', 'ap-uid', ?, 'ap-south', 'finished', '', ?, ?, '[]')",
        name,
        REPO,
        new Date(longAgo - 600_000).toISOString(),
        new Date(longAgo).toISOString(),
        NS,
        longAgo,
        longAgo,
      );
      if (leftMsAgo !== undefined) {
        state.storage.sql.exec("INSERT INTO memory (key, value) VALUES ('agent-disconnected-at:ap-south', ?)", JSON.stringify(Date.now() - leftMsAgo));
      }
    });
    return name;
  }

  it("a cluster missing from AGENT_CLUSTERS, its agent restarting: its open rows are not closed as gone by another cluster's fresh view", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: EU });
    // Seen busy in ap-south (its agent connected then), its job completed; its agent left a minute ago (restarting).
    const name = await apSouthRow(env, 60_000);
    const eu = await clusterAgent(env, EU, []); // a whole view, newer than the row's facts, of another cluster
    await runScheduled(env, Date.now());
    expect(eu.orders).toEqual([]);
    expect(await rowOf(env, name)).toMatchObject({ state: "finished", code: "CannotJudge", cluster: "ap-south" });
    eu.ws.close(1000, "done");
  });

  it.each([
    ["its agent left over an hour ago", RETIRED_AFTER_MS + 60_000],
    ["its agent never seen leaving", undefined],
  ])("a cluster retired from AGENT_CLUSTERS (%s): its open rows close as gone at the next sweep, saying why; nothing is deleted", async (_what, leftMsAgo) => {
    const env = agentEnv({ AGENT_CLUSTERS: EU });
    const name = await apSouthRow(env, leftMsAgo);
    const eu = await clusterAgent(env, EU, []);
    await runScheduled(env, Date.now());
    expect(eu.orders).toEqual([]);
    expect(await rowOf(env, name)).toMatchObject({ state: "gone", code: "Gone", cluster: "ap-south" });
    eu.ws.close(1000, "done");
  });
});

describe("operators see clusters", () => {
  it("/admin/runners shows each row's cluster and filters by ?cluster=; /admin has a line per cluster's agent", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US},ap-south` });
    const [inEu, inUs] = [`${SCALE_SET}-runner-eu007`, `${SCALE_SET}-runner-us007`];
    const eu = await clusterAgent(env, EU, [runner(inEu, { workflowRunId: 901, jobRepositoryName: REPO })]);
    const us = await clusterAgent(env, US, [runner(inUs, { workflowRunId: 902, jobRepositoryName: REPO })]);
    await completed(env, inEu, 901);
    await completed(env, inUs, 902);
    await settleAlarms(env);
    expect((await adminRunners(env, `?cluster=${EU}`)).runners.map((r) => [r.name, r.cluster])).toEqual([[inEu, EU]]);
    expect((await adminRunners(env, `?cluster=${US}`)).runners.map((r) => [r.name, r.cluster])).toEqual([[inUs, US]]);
    const bad = await call(
      env,
      new Request("https://arc-reaper.test/admin/runners?cluster=EU_West", { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } }),
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'cluster must be a cluster name (DNS label), got "EU_West"' });

    const page = await (
      await call(env, new Request(`https://arc-reaper.test/admin?cluster=${EU}`, { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } }))
    ).text();
    expect(page).toContain(`id="agent-status-${EU}"`);
    expect(page).toContain(`id="agent-status-${US}"`);
    expect(page).toMatch(/id="agent-status-ap-south"[^>]*>No agent of cluster ap-south is connected/);
    expect(page).toContain(inEu);
    expect(page).not.toContain(inUs);
    const text = await metrics(env);
    expect(text).toContain('arc_reaper_agent_connected{cluster="ap-south"} 0');
    const deep = await call(
      env,
      new Request("https://arc-reaper.test/healthz/deep", { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } }),
    );
    expect(deep.status).toBe(503);
    expect(((await deep.json()) as { checks: unknown[] }).checks).toContainEqual({
      name: "agent clusters",
      ok: false,
      detail: `AGENT_CLUSTERS expects ${EU}, ${US}, ap-south; no agent connected for ap-south`,
    });
    // An agent of a cluster not listed is served, and named: once it leaves, nothing would look for its runners.
    const stray = await clusterAgent(env, "sa-east", []);
    const again = await call(
      env,
      new Request("https://arc-reaper.test/healthz/deep", { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } }),
    );
    expect(((await again.json()) as { checks: unknown[] }).checks).toContainEqual({
      name: "agent clusters",
      ok: false,
      detail: `AGENT_CLUSTERS expects ${EU}, ${US}, ap-south; no agent connected for ap-south; connected but not in AGENT_CLUSTERS: sa-east (list it, or its runners go unwatched once its agent leaves)`,
    });
    stray.ws.close(1000, "done");
    eu.ws.close(1000, "done");
    us.ws.close(1000, "done");
  });
});

describe("one current connection per cluster", () => {
  // A socket as the Hibernation API hands one back: only its attachment matters to the ledger.
  const socketOf = (attachment: object) =>
    ({ deserializeAttachment: () => attachment, serializeAttachment: () => undefined, close: () => undefined }) as unknown as WebSocket;

  it("a message from a replaced connection (a snapshot part, an upsert) never touches the view the current one sent", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US}` });
    const us = await clusterAgent(env, US, [runner(`${SCALE_SET}-runner-us008`), runner(`${SCALE_SET}-runner-us009`)]);
    const empty = JSON.stringify({ type: "snapshot", id: "late", part: 1, parts: 1, runners: [] });
    const upsert = JSON.stringify({ type: "upsert", runner: runner(`${SCALE_SET}-runner-us010`) });
    const current = await runInDurableObject(
      ledgerOf(env),
      (_i, state) => state.storage.sql.exec<{ value: string }>("SELECT value FROM memory WHERE key = ?", `agent-conn:${US}`).one().value,
    );
    await runInDurableObject(ledgerOf(env), async (instance) => {
      const replaced = socketOf({
        conn: "a-replaced-connection",
        cluster: US,
        connectedAt: 0,
        completeAt: 1,
        hello: { version: "0.1.0", namespaces: [NS], dryRun: false },
      });
      await instance.webSocketMessage(replaced, upsert);
      await instance.webSocketMessage(replaced, empty);
    });
    expect(await ledgerOf(env).agentStatus(US)).toMatchObject({ connected: true, complete: true, runners: 2 });
    // The same messages on the current connection do change it: the check above is the connection, not the message.
    await runInDurableObject(ledgerOf(env), async (instance) => {
      const live = socketOf({
        conn: JSON.parse(current) as string,
        cluster: US,
        connectedAt: 0,
        completeAt: 1,
        hello: { version: "0.1.0", namespaces: [NS], dryRun: false },
      });
      await instance.webSocketMessage(live, upsert);
    });
    expect((await ledgerOf(env).agentStatus(US)).runners).toBe(3);
    us.ws.close(1000, "done");
  });

  it("an agent's return releases only its own cluster's held rows (and those of no known cluster)", async () => {
    const env = agentEnv({ AGENT_CLUSTERS: `${EU},${US}` });
    const eu = await clusterAgent(env, EU, []);
    const held = await runInDurableObject(ledgerOf(env), (_i, state) => {
      const sql = state.storage.sql;
      const row = (id: number, cluster: string | null) =>
        sql.exec(
          "INSERT INTO runners (id, runner, job_id, repo, run_id, run_attempt, state, reason, due_at, story, held_for, cluster) VALUES (?, ?, ?, ?, ?, 1, 'finished', 'held', NULL, '[]', 'agent', ?)",
          id,
          `${SCALE_SET}-runner-held${id}`,
          id,
          REPO,
          id,
          cluster,
        );
      row(1, EU);
      row(2, US);
      row(3, null);
      return sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runners WHERE held_for = 'agent'").one().n;
    });
    expect(held).toBe(3);
    // US's return makes its rows (and the one of no known cluster) due at once: the alarm judges them
    // against both complete views and finds them gone. EU's row waits for EU's own snapshot (or the sweep).
    const us = await clusterAgent(env, US, []);
    await settleAlarms(env);
    const after = await runInDurableObject(ledgerOf(env), (_i, state) =>
      state.storage.sql
        .exec<{ id: number; state: string; held_for: string | null }>("SELECT id, state, held_for FROM runners ORDER BY id")
        .toArray()
        .map((r) => [r.id, r.state, r.held_for]),
    );
    expect(after).toEqual([
      [1, "finished", "agent"],
      [2, "gone", null],
      [3, "gone", null],
    ]);
    eu.ws.close(1000, "done");
    us.ws.close(1000, "done");
  });
});

describe("migration 5", () => {
  it("a single agent's view, snapshot and removals from before clusters become the cluster default's", async () => {
    const env = agentEnv();
    await configureLedger(env);
    await runInDurableObject(ledgerOf(env), (_i, state) => {
      const sql = state.storage.sql;
      const cols =
        "namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL, creation_timestamp TEXT NOT NULL, deletion_timestamp TEXT, workflow_run_id INTEGER, job_repository_name TEXT, PRIMARY KEY (namespace, name)";
      for (const s of [
        // Migration 9 (next looks) undone too: it runs again after 7.
        "DROP INDEX runners_by_prune",
        "ALTER TABLE runners DROP COLUMN prune_at",
        "ALTER TABLE runners DROP COLUMN failures",
        "ALTER TABLE unseen DROP COLUMN failures",
        // Migration 12 (runner ids), 14 (unseen rows' verdict keys) and 15 (deletion checks' codes) too.
        "ALTER TABLE runners DROP COLUMN runner_id",
        "ALTER TABLE unseen DROP COLUMN verdict_key",
        "ALTER TABLE runners DROP COLUMN check_code",
        "DROP INDEX runners_held_by_cluster",
        "DROP TABLE agent_view",
        "DROP TABLE agent_snapshot",
        "DROP TABLE agent_removed",
        `CREATE TABLE agent_view (${cols}) WITHOUT ROWID`,
        `CREATE TABLE agent_snapshot (${cols}) WITHOUT ROWID`,
        "CREATE TABLE agent_removed (namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL, removed_at INTEGER NOT NULL, PRIMARY KEY (namespace, name, uid)) WITHOUT ROWID",
      ])
        sql.exec(s);
      sql.exec(
        "INSERT INTO agent_view (namespace, name, uid, creation_timestamp, workflow_run_id) VALUES (?, 'old-runner', 'old-uid', '2026-11-30T10:00:00Z', 77)",
        NS,
      );
      sql.exec("INSERT INTO agent_removed (namespace, name, uid, removed_at) VALUES (?, 'gone-runner', 'gone-uid', 123)", NS);
      sql.exec("UPDATE schema_version SET version = 6"); // before migration 7 (many clusters)
    });
    await evictLedger(env);
    expect((await ledgerOf(env).agentStatus("default")).runners).toBe(1);
    const after = await runInDurableObject(ledgerOf(env), (_i, state) => ({
      version: state.storage.sql.exec<{ version: number }>("SELECT version FROM schema_version").one().version,
      view: state.storage.sql.exec("SELECT cluster, name, workflow_run_id FROM agent_view").toArray(),
      removed: state.storage.sql.exec("SELECT cluster, name, removed_at FROM agent_removed").toArray(),
    }));
    expect(after).toEqual({
      version: SCHEMA_VERSION,
      view: [{ cluster: "default", name: "old-runner", workflow_run_id: 77 }],
      removed: [{ cluster: "default", name: "gone-runner", removed_at: 123 }],
    });
  });
});

describe("direct mode", () => {
  it("stays one cluster, named KUBE_CLUSTER_NAME in rows, filters and metrics", async () => {
    const s = await stack({ KUBE_CLUSTER_NAME: "on-prem" });
    const name = `${SCALE_SET}-runner-direct1`;
    await s.runner({ name, workflowRunId: 951 });
    const now = Date.now() + 86_400_000;
    await s.jobCompleted({ runner: name, runId: 951, jobId: 9510, startedAt: before(now, 1200), completedAt: before(now, 600), conclusion: "cancelled" });
    await s.sweep(now);
    expect((await adminRunners(s.env, "?cluster=on-prem")).runners.map((r) => [r.name, r.state, r.cluster])).toEqual([[name, "reaped", "on-prem"]]);
    expect((await adminRunners(s.env, "?cluster=default")).runners).toEqual([]);
    const text = await (
      await call(s.env, new Request("https://arc-reaper.test/metrics", { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } }))
    ).text();
    expect(text).toContain('arc_reaper_cluster_deletions_total{cluster="on-prem"} 1');
    expect(text).not.toContain("arc_reaper_agent_connected");
  });
});
