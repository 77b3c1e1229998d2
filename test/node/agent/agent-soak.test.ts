// A short soak of the agent: runners come, start jobs and go (names come back
// with new uids), watches are closed and expired, the ledger connection drops,
// and orders arrive: right ones, ones for another run, ones for a uid that is
// gone. Afterwards: no wrongful deletion, at most one DELETE per uid, and the
// ledger's view (snapshots + upserts/removes) equals the cluster.
import { afterAll, beforeAll, expect, it, type TestContext } from "vitest";
import type { AgentRunner, DeleteOrder } from "../../../src/cluster/agent-protocol.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { connected, deletes, ledgerView, NS, ofType, projected, seedRunner, startRig, type Rig } from "./agent-rig.ts";
import { waitFor } from "./agent-ledger-standin.ts";

const SOAK_MS = 6000;
// The story is a fixed seed: on a loaded machine 6 s hold few steps, so it runs on to this many (within 40 s).
const MIN_STEPS = 200;
const MAX_MS = 40_000;
const NAMES = Array.from({ length: 24 }, (_, i) => `soak-${i}`);

let standin: KubeStandin;
let rig: Rig | undefined;
beforeAll(async () => {
  standin = await startKubeStandin();
});
afterAll(async () => {
  await rig?.close();
  await standin.close();
});

type Kind = "right" | "other-run" | "gone-uid";

it("soak: churn, watch expiries and disconnects give 0 wrongful deletions and a converged view", { timeout: 90_000 }, async (ctx: TestContext) => {
  const r = await startRig(standin, { autoFinalize: true });
  rig = r;
  await connected(r);
  // A fixed seed: a failure replays the same story.
  let seed = 20261201;
  const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(rand() * xs.length)];

  const runOf = new Map<string, number | undefined>();
  const goneUids: Array<{ name: string; uid: string }> = [];
  const orders = new Map<string, { order: DeleteOrder; kind: Kind }>();
  const counts = { ops: 0, seeds: 0, jobs: 0, removes: 0, expiries: 0, closes: 0, drops: 0 };
  let seq = 0;

  const started = Date.now();
  const deadline = started + SOAK_MS;
  while (Date.now() < deadline || (counts.ops < MIN_STEPS && Date.now() < started + MAX_MS)) {
    counts.ops += 1;
    const live = new Map((await r.tenant.list()).map((o) => [o.metadata.name, o]));
    const name = pick(NAMES) ?? "soak-0";
    const cur = live.get(name);
    const x = rand();
    try {
      if (x < 0.3) {
        if (cur === undefined) {
          const run = rand() < 0.7 ? 1 + Math.floor(rand() * 1_000_000) : undefined;
          const o = await r.tenant.seed(seedRunner(name, run === undefined ? {} : { workflowRunId: run }));
          runOf.set(o.metadata.uid, run);
          counts.seeds += 1;
        }
      } else if (x < 0.4) {
        if (cur !== undefined && runOf.get(cur.metadata.uid) === undefined && cur.metadata.deletionTimestamp === undefined) {
          const run = 1 + Math.floor(rand() * 1_000_000);
          runOf.set(cur.metadata.uid, run);
          await r.tenant.setStatus(NS, name, { phase: "Running", workflowRunId: run, jobRepositoryName: "octo-org/octo-repo" });
          counts.jobs += 1;
        }
      } else if (x < 0.5) {
        if (cur !== undefined) {
          goneUids.push({ name, uid: cur.metadata.uid });
          await r.tenant.remove(NS, name);
          counts.removes += 1;
        }
      } else if (x < 0.53) {
        await r.tenant.expireWatches();
        counts.expiries += 1;
      } else if (x < 0.56) {
        await r.tenant.closeWatches();
        counts.closes += 1;
      } else if (x < 0.58) {
        r.ledger.dropAll();
        counts.drops += 1;
      } else {
        const conn = r.ledger.connections.filter((c) => !c.closed).at(-1);
        const busy =
          conn === undefined ? [] : [...ledgerView(conn).values()].filter((v): v is AgentRunner & { workflowRunId: number } => v.workflowRunId !== undefined);
        const target = pick(busy);
        if (conn !== undefined && target !== undefined) {
          const y = rand();
          const kind: Kind = y < 0.6 ? "right" : y < 0.8 ? "other-run" : "gone-uid";
          const stale = pick(goneUids);
          const order: DeleteOrder = {
            type: "order",
            id: `soak-${++seq}`,
            namespace: NS,
            name: kind === "gone-uid" && stale ? stale.name : target.name,
            uid: kind === "gone-uid" && stale ? stale.uid : target.uid,
            runId: kind === "other-run" ? target.workflowRunId + 1 : target.workflowRunId,
            reason: `soak ${kind}`,
          };
          if (kind !== "gone-uid" || stale !== undefined) {
            orders.set(order.id, { order, kind });
            conn.socket.send(JSON.stringify(order));
          }
        }
      }
    } catch {
      // A race with the agent's own delete (404 on setStatus or remove) is part of the story.
    }
    // Pacing, not a wait for a condition: the churn's steps land 3 ms apart so that the agent's watch interleaves with them.
    await new Promise((res) => setTimeout(res, 3));
  }

  // Settle: the ledger's view must become the cluster's.
  const clusterView = async (): Promise<string> => JSON.stringify((await r.tenant.list()).map(projected).sort((a, b) => a.name.localeCompare(b.name)));
  const ledgerText = (): string => {
    const conn = r.ledger.connections.filter((c) => !c.closed).at(-1);
    if (conn === undefined) return "no connection";
    return JSON.stringify([...ledgerView(conn).values()].filter((v) => v.namespace === NS).sort((a, b) => a.name.localeCompare(b.name)));
  };
  let [mine, cluster] = ["", ""];
  const same = async () => {
    [mine, cluster] = [ledgerText(), await clusterView()];
    return mine === cluster ? true : undefined;
  };
  await waitFor("the ledger's view to become the cluster's", same, 10_000).catch(() => undefined);
  expect(mine, "the ledger's view after settling").toBe(cluster);

  const reports = r.ledger.connections.flatMap((c) => ofType(c, "report"));
  const dels = deletes(await r.tenant.calls());
  const wrongful: string[] = [];
  for (const rep of reports) {
    const o = orders.get(rep.id);
    expect(o, `report ${rep.id} answers an order`).toBeDefined();
    if (o === undefined || rep.outcome !== "deleted" || /already done/.test(rep.why)) continue;
    // A DELETE was sent for this order: it must be a right one, for the run the runner took.
    if (o.kind !== "right" || runOf.get(o.order.uid) !== o.order.runId) wrongful.push(`${rep.id} ${o.kind} ${rep.why}`);
  }
  const perUid = new Map<string, number>();
  for (const d of dels) {
    const uid = String((d.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid);
    perUid.set(uid, (perUid.get(uid) ?? 0) + 1);
  }
  const byOutcome = (o: string): number => reports.filter((x) => x.outcome === o).length;
  const byKind = (k: Kind): number => [...orders.values()].filter((o) => o.kind === k).length;
  const line =
    `soak ${SOAK_MS / 1000} s: ${counts.ops} steps (${counts.seeds} runners created, ${counts.jobs} jobs started, ${counts.removes} removed, ` +
    `${counts.expiries} watch expiries, ${counts.closes} watch closes, ${counts.drops} connection drops); ` +
    `${orders.size} orders (${byKind("right")} right, ${byKind("other-run")} other run, ${byKind("gone-uid")} gone uid); ` +
    `${reports.length} reports (${byOutcome("deleted")} deleted, ${byOutcome("refused")} refused, ${byOutcome("gone")} gone, ${byOutcome("failed")} failed); ` +
    `${dels.length} DELETEs; ${r.ledger.connections.length} connections; wrongful deletions ${wrongful.length}`;
  ctx.annotate(line);
  process.stderr.write(`[agent-soak] ${line}\n`);

  expect(wrongful).toEqual([]);
  expect([...perUid.values()].every((n) => n === 1)).toBe(true);
  expect(r.ledger.connections.flatMap((c) => c.invalid)).toEqual([]);
  // The story must have exercised what it claims to.
  expect(counts.expiries + counts.closes).toBeGreaterThan(0);
  expect(counts.drops).toBeGreaterThan(0);
  expect(byOutcome("deleted")).toBeGreaterThan(0);
  expect(byOutcome("refused")).toBeGreaterThan(0);
});
