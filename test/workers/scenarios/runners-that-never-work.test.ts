// Runners that never work, end to end: a scale set whose runners run a version
// GitHub no longer assigns jobs to (idle past REAPER_IDLE_ALERT_SECONDS), and one
// ARC parked as Outdated, counted per scale set and runner version by the sweep,
// shown on /admin and /metrics, and never deleted.
import { describe, expect, it } from "vitest";
import { makeEphemeralRunner, type ArcVersion } from "../../standins/kube/control.ts";
import { deletes, NOW } from "../support/kube-calls.ts";
import { before, NS, stack, type Stack } from "../support/stack.ts";
import { agentEnv, connect, runner as agentRunner } from "../support/fake-agent.ts";
import { waitFor } from "../support/wait-for.ts";
import { ADMIN_TOKEN, call, runScheduled } from "../support/worker.ts";

const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const k8sTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const get = async (s: Stack, path: string): Promise<string> => (await call(s.env, new Request(`https://arc-reaper.test${path}`, { headers: bearer }))).text();
const idleSamples = async (s: Stack): Promise<string[]> => (await get(s, "/metrics")).split("\n").filter((l) => l.startsWith("arc_reaper_idle_runners{"));

async function seed(s: Stack, version: ArcVersion, name: string, o: { scaleSet: string; image: string; ageS: number; phase?: string; runId?: number }) {
  return s.kube.seed(
    makeEphemeralRunner({
      namespace: NS,
      name,
      scaleSet: o.scaleSet,
      arcVersion: version,
      runnerImage: o.image,
      creationTimestamp: k8sTime(NOW - o.ageS * 1000),
      ...(o.phase ? { phase: o.phase } : {}),
      ...(o.runId !== undefined ? { workflowRunId: o.runId } : {}),
    }),
  );
}

describe.each(["0.14.2", "0.15.1"] as const)("ARC %s: runners that never work", (version) => {
  it("counts a scale set of idle runners of an old version and a parked Outdated one, shows them on /admin and /metrics, and deletes none", async () => {
    const s = await stack({ REAPER_IDLE_ALERT_SECONDS: "3600" }, { arcVersion: version, autoFinalize: true });
    const old = "ghcr.io/actions/actions-runner:2.300.0";
    for (const [i, ageS] of [7200, 9000, 10800].entries()) await seed(s, version, `stale-${i}`, { scaleSet: "stale-set", image: old, ageS });
    for (const i of [0, 1]) await seed(s, version, `parked-${i}`, { scaleSet: "parked-set", image: old, ageS: 600, phase: "Outdated" });
    await seed(s, version, "young", { scaleSet: "fresh-set", image: "ghcr.io/actions/actions-runner:2.334.0", ageS: 600 });
    await seed(s, version, "busy", { scaleSet: "fresh-set", image: "ghcr.io/actions/actions-runner:2.334.0", ageS: 7200, runId: 901 });
    // A job started on this one (the webhook names it) though the listener's job fields never came (0.15: a lost patch).
    await seed(s, version, "named", { scaleSet: "fresh-set", image: "ghcr.io/actions/actions-runner:2.334.0", ageS: 7200 });
    expect((await s.jobStarted({ runner: "busy", runId: 901, jobId: 9010, startedAt: before(NOW, 600) })).status).toBe(202);
    expect((await s.jobStarted({ runner: "named", runId: 902, jobId: 9020, startedAt: before(NOW, 600) })).status).toBe(202);

    await s.sweep(NOW);
    expect(await idleSamples(s)).toEqual([
      'arc_reaper_idle_runners{cluster="default",namespace="arc-runners",scale_set="parked-set",runner_version="2.300.0",why="outdated"} 2',
      'arc_reaper_idle_runners{cluster="default",namespace="arc-runners",scale_set="stale-set",runner_version="2.300.0",why="idle"} 3',
    ]);
    const page = await get(s, "/admin");
    expect(page).toContain("<h2>Runners that never work</h2>");
    const rows = [...page.matchAll(/<tr data-scale-set="([^"]*)" data-why="([^"]*)">([\s\S]*?)<\/tr>/g)].map((m) => [
      m[1],
      m[2],
      /<bdi class="runner-version">([^<]*)<\/bdi>/.exec(m[3] ?? "")?.[1],
      /<td class="n">(\d+)<\/td>/.exec(m[3] ?? "")?.[1],
      /<time datetime="([^"]*)"/.exec(m[3] ?? "")?.[1],
    ]);
    expect(rows).toEqual([
      ["parked-set", "outdated", "2.300.0", "2", new Date(Date.parse(k8sTime(NOW - 600_000))).toISOString()],
      ["stale-set", "idle", "2.300.0", "3", new Date(Date.parse(k8sTime(NOW - 10_800_000))).toISOString()],
    ]);

    // Never deleted, however many sweeps: ARC parks them on purpose, and a new runner would be the same version.
    for (const t of [60_000, 120_000]) await s.sweep(NOW + t);
    expect((await deletes(s)).map((d) => d.path.split("/").pop())).toEqual([]);
    expect((await s.kube.list()).map((r) => r.metadata.name).filter((n) => /^(stale|parked)-/.test(n))).toHaveLength(5);

    // The image is updated: ARC replaces the runners, and the count goes to none. ("named" goes too: today's rules close
    // its row as gone once the object shows no run, and it would then count as idle; identity by runner id keeps it.)
    for (const n of ["stale-0", "stale-1", "stale-2", "parked-0", "parked-1", "named"]) await s.kube.remove(NS, n);
    await s.sweep(NOW + 180_000);
    expect(await idleSamples(s)).toEqual([]);
    expect(await get(s, "/admin")).toContain("None: every runner got a job within 1h 0m of being made, and no scale set is parked.");
  });
});

describe("agent mode: runners that never work", () => {
  it("counts what the agent's arc field says of idle and Outdated runners (scale set, version), and orders no deletion", async () => {
    const env = agentEnv();
    const agent = await connect(env);
    const old = (hours: number) => before(NOW, hours * 3600);
    agent.send({
      type: "snapshot",
      id: "idle-1",
      part: 1,
      parts: 1,
      runners: [
        agentRunner("stale-a", { creationTimestamp: old(2), arc: { scaleSet: "stale-set", runnerVersion: "2.300.0" } }),
        agentRunner("stale-b", { creationTimestamp: old(3), arc: { scaleSet: "stale-set", runnerVersion: "2.300.0" } }),
        agentRunner("parked", { creationTimestamp: old(0.1), arc: { phase: "Outdated", scaleSet: "parked-set", runnerVersion: "2.300.0" } }),
        agentRunner("young", { creationTimestamp: old(0.1), arc: { scaleSet: "fresh-set" } }),
        agentRunner("busy", { creationTimestamp: old(3), workflowRunId: 77, jobRepositoryName: "octo-org/octo-repo" }),
      ],
    });
    const metric = (e: typeof env) => call(e, new Request("https://arc-reaper.test/metrics", { headers: bearer })).then((r) => r.text());
    // The snapshot lands asynchronously: sweep until the count shows it (no sleep on a guess).
    const lines = await waitFor("the count of runners that never work", async () => {
      await runScheduled(env, NOW);
      const found = (await metric(env)).split("\n").filter((l) => l.startsWith("arc_reaper_idle_runners{"));
      return found.length > 0 ? found : undefined;
    });
    expect(lines).toEqual([
      'arc_reaper_idle_runners{cluster="default",namespace="arc-runners",scale_set="parked-set",runner_version="2.300.0",why="outdated"} 1',
      'arc_reaper_idle_runners{cluster="default",namespace="arc-runners",scale_set="stale-set",runner_version="2.300.0",why="idle"} 2',
    ]);
    expect(agent.orders).toEqual([]);
  });
});
