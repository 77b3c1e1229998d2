// The agent's watch: client-node calls the event callback inside its own try and
// drops what it throws. An error in the agent's handling of an event is never
// lost: the watch ends as failed (logged, counted as the namespace's failure)
// and the namespace is listed again, so the cache behind it is whole once more.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentRunner } from "../../../src/cluster/agent-protocol.ts";
import { kubeRunners } from "../../../src/agent/kube-runners.ts";
import type { Log } from "../../../src/agent/log.ts";
import { NamespaceWatch, type RunnerEvents } from "../../../src/agent/watch-runners.ts";
import { createKubeTenant, makeEphemeralRunner } from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { waitFor } from "./agent-ledger-standin.ts";
import { standinKubeConfig } from "../../standins/kube/kube-config.ts";

const NS = "arc-runners";
let standin: KubeStandin;
beforeAll(async () => {
  standin = await startKubeStandin();
});
afterAll(async () => {
  await standin.close();
});

describe("agent: an error thrown while handling a watch event", () => {
  it("ends the watch as failed, says so, and lists the namespace again", async () => {
    const t = await createKubeTenant(standin.url, { namespaces: [NS] });
    await t.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: "arc-runners-abcde-first", workflowRunId: 1 }));
    const kc = standinKubeConfig(t.baseUrl, t.adminToken);
    const lines: { msg: string; fields?: Parameters<Log>[2] }[] = [];
    const listed: string[][] = [];
    const failed: string[] = [];
    let throwOnce = true;
    const events: RunnerEvents = {
      listed: (_ns, runners) => void listed.push(runners.map((r: AgentRunner) => r.name).sort()),
      unreadable: () => {},
      added: (r) => {
        if (throwOnce && r.name.endsWith("-second")) {
          throwOnce = false;
          throw new Error("the view could not take it");
        }
      },
      removed: () => {},
      bookmark: () => {},
      watching: () => {},
      failed: (_ns, why) => void failed.push(why),
    };
    const watch = new NamespaceWatch({
      namespace: NS,
      kc,
      kube: kubeRunners(kc, () => {}, 5_000),
      events,
      log: (_level, msg, fields) => void lines.push({ msg, ...(fields ? { fields } : {}) }),
      backoff: { baseMs: 10, capMs: 50 },
    });
    watch.start();
    try {
      await waitFor("the first list", () => (listed.length === 1 ? true : undefined));
      await t.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: "arc-runners-abcde-second", workflowRunId: 2 }));
      await waitFor("a second list, after the failed handling", () => (listed.length >= 2 ? true : undefined));
      expect(failed).toEqual([expect.stringMatching(/^watch: handling the ADDED event failed: the view could not take it \(listing again\)$/)]);
      expect(lines.find((l) => l.msg === "watch failed")?.fields).toMatchObject({
        namespace: NS,
        error: expect.stringContaining("the view could not take it"),
      });
      // The list after it has the runner whose event was lost.
      expect(listed[1]).toEqual(["arc-runners-abcde-first", "arc-runners-abcde-second"]);
    } finally {
      await watch.stop();
      await t.dispose();
    }
  });
});
