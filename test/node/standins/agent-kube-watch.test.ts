// The Kubernetes stand-in's watch (test/standins/kube/watch.ts), which the agent
// relies on: resourceVersion on lists, ADDED/MODIFIED/DELETED as newline-
// delimited JSON, resume from a resourceVersion, 410 Expired when it is too
// old, and RBAC with the watch verb, under the agent's Role from infra/agent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeTenant, makeEphemeralRunner, reaperRules, roleBindings, type KubeTenant } from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";
import { loadAgentRbac } from "../agent/agent-rbac.ts";

const NS = "arc-runners";
const OTHER = "team-b-runners";
const runnersPath = (ns: string): string => `/apis/actions.github.com/v1alpha1/namespaces/${ns}/ephemeralrunners`;

interface WatchEvent {
  type: string;
  object: {
    kind?: string;
    code?: number;
    reason?: string;
    message?: string;
    metadata?: { name?: string; resourceVersion?: string; deletionTimestamp?: string };
  };
}

/** An open watch: its HTTP status, the events so far, and whether the server ended it. */
class OpenWatch {
  readonly events: WatchEvent[] = [];
  status = 0;
  ended = false;
  private readonly abort = new AbortController();
  readonly ready: Promise<void>;

  constructor(url: string, token: string) {
    this.ready = (async () => {
      const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` }, signal: this.abort.signal });
      this.status = res.status;
      if (res.body === null) return;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            buffered += decoder.decode(value, { stream: true });
            let nl: number;
            while ((nl = buffered.indexOf("\n")) >= 0) {
              this.events.push(JSON.parse(buffered.slice(0, nl)) as WatchEvent);
              buffered = buffered.slice(nl + 1);
            }
          }
        } catch {
          // aborted by close()
        }
        this.ended = true;
      })();
    })();
  }

  async until(what: string, done: (w: OpenWatch) => boolean, ms = 5000): Promise<void> {
    const end = Date.now() + ms;
    while (!done(this)) {
      if (Date.now() > end)
        throw new Error(`watch: timed out waiting for ${what}; events: ${JSON.stringify(this.events.map((e) => [e.type, e.object.metadata?.name]))}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  close(): void {
    this.abort.abort();
  }
}

let standin: KubeStandin;
let tenant: KubeTenant;
const agentToken = "agent-sa-token-0123456789abcdef";
const reaperToken = "reaper-sa-token-0123456789abcdef";
const watches: OpenWatch[] = [];

function watch(ns: string, query: string, token = agentToken): OpenWatch {
  const w = new OpenWatch(`${tenant.baseUrl}${runnersPath(ns)}?watch=true${query}`, token);
  watches.push(w);
  return w;
}

/** A positive barrier: a runner created now reaches the open watch (it is registered and live). */
async function live(w: OpenWatch, name: string): Promise<void> {
  await w.ready;
  await tenant.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc", name }));
  await w.until(`ADDED ${name}`, (x) => x.events.some((e) => e.type === "ADDED" && e.object.metadata?.name === name));
}

async function list(ns: string, token = agentToken): Promise<{ status: number; rv: string; names: string[] }> {
  const res = await fetch(`${tenant.baseUrl}${runnersPath(ns)}`, { headers: { Authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { metadata?: { resourceVersion?: string }; items?: Array<{ metadata: { name: string } }> };
  return { status: res.status, rv: body.metadata?.resourceVersion ?? "", names: (body.items ?? []).map((i) => i.metadata.name) };
}

beforeAll(async () => {
  standin = await startKubeStandin();
  tenant = await createKubeTenant(standin.url, { namespaces: [NS, OTHER] });
  const rbac = loadAgentRbac(NS, OTHER);
  await tenant.addServiceAccount({ ...rbac.serviceAccount, token: agentToken, bindings: rbac.bindings });
  await tenant.addServiceAccount({ name: "arc-reaper", namespace: "arc-reaper", token: reaperToken, bindings: roleBindings([NS]) });
});

afterAll(async () => {
  for (const w of watches) w.close();
  await standin.close();
});

describe("the stand-in's watch", () => {
  it("streams ADDED, MODIFIED and DELETED after the list's resourceVersion, in order, with rising resourceVersions", async () => {
    await tenant.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc", name: "before-list" }));
    const l = await list(NS);
    expect(l.status).toBe(200);
    expect(l.rv).toMatch(/^\d+$/);
    const w = watch(NS, `&resourceVersion=${l.rv}`);
    await w.ready;
    expect(w.status).toBe(200);
    await tenant.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc", name: "w1" }));
    await tenant.seed(makeEphemeralRunner({ namespace: OTHER, scaleSet: "arc", name: "elsewhere" }));
    await tenant.setStatus(NS, "w1", { phase: "Running", workflowRunId: 77, jobRepositoryName: "octo-org/octo-repo" });
    await tenant.remove(NS, "w1");
    await w.until("three events", (x) => x.events.length >= 3);
    expect(w.events.map((e) => [e.type, e.object.metadata?.name])).toEqual([
      ["ADDED", "w1"],
      ["MODIFIED", "w1"],
      ["DELETED", "w1"],
    ]);
    const rvs = w.events.map((e) => Number(e.object.metadata?.resourceVersion));
    expect(rvs[0]).toBeGreaterThan(Number(l.rv));
    expect(rvs[1]).toBeGreaterThan(rvs[0] ?? Infinity);
    expect(rvs[2]).toBeGreaterThan(rvs[1] ?? Infinity);
    w.close();
  });

  it("without a resourceVersion sends the current objects as ADDED first", async () => {
    const w = watch(NS, "");
    await w.until("the ADDED of before-list", (x) => x.events.some((e) => e.object.metadata?.name === "before-list"));
    expect(w.events.every((e) => e.type === "ADDED")).toBe(true);
    w.close();
  });

  it("resumes from a resourceVersion: the events after it are replayed", async () => {
    const l = await list(NS);
    await tenant.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc", name: "replayed" }));
    const w = watch(NS, `&resourceVersion=${l.rv}`);
    await w.until("the replayed ADDED", (x) => x.events.length >= 1);
    expect(w.events[0]).toMatchObject({ type: "ADDED", object: { metadata: { name: "replayed" } } });
    w.close();
  });

  it("a DELETE through the API with ARC's finalizers is a MODIFIED with deletionTimestamp; finalizing is the DELETED", async () => {
    await tenant.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc", name: "finalized" }));
    const w = watch(NS, `&resourceVersion=${(await list(NS)).rv}`);
    await w.ready;
    const res = await fetch(`${tenant.baseUrl}${runnersPath(NS)}/finalized`, { method: "DELETE", headers: { Authorization: `Bearer ${agentToken}` } });
    expect(res.status).toBe(200);
    await tenant.finalize({ names: ["finalized"] });
    await w.until("two events", (x) => x.events.length >= 2);
    expect(w.events[0]?.type).toBe("MODIFIED");
    expect(w.events[0]?.object.metadata?.deletionTimestamp).toMatch(/Z$/);
    expect(w.events[1]?.type).toBe("DELETED");
    w.close();
  });

  it("answers a resume from a compacted resourceVersion with an ERROR event: Status Expired, code 410", async () => {
    const old = (await list(NS)).rv;
    await tenant.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc", name: "after-old" }));
    await tenant.compact();
    const w = watch(NS, `&resourceVersion=${old}`);
    await w.until("the stream to end", (x) => x.ended);
    expect(w.status).toBe(200);
    expect(w.events).toEqual([{ type: "ERROR", object: expect.objectContaining({ kind: "Status", status: "Failure", reason: "Expired", code: 410 }) }]);
    expect(w.events[0]?.object.message).toMatch(/too old resource version/);
    // The current resourceVersion still works.
    const fresh = watch(NS, `&resourceVersion=${(await list(NS)).rv}`);
    await live(fresh, "after-old-probe");
    expect(fresh.ended).toBe(false);
    fresh.close();
  });

  it("watches/close ends open watches; watches/expire also makes every resume a 410", async () => {
    const rv = (await list(NS)).rv;
    const a = watch(NS, `&resourceVersion=${rv}`);
    await live(a, "close-probe-a");
    expect(await tenant.closeWatches()).toBeGreaterThanOrEqual(1);
    await a.until("the stream to end", (x) => x.ended);
    const b = watch(NS, `&resourceVersion=${rv}`);
    await live(b, "close-probe-b");
    expect(b.ended).toBe(false);
    expect(await tenant.expireWatches()).toBeGreaterThanOrEqual(1);
    await b.until("the stream to end", (x) => x.ended);
    const c = watch(NS, `&resourceVersion=${rv}`);
    await c.until("the stream to end", (x) => x.ended);
    expect(c.events[0]?.object.code).toBe(410);
  });

  it("ends a watch after timeoutSeconds", async () => {
    const w = watch(NS, `&resourceVersion=${(await list(NS)).rv}&timeoutSeconds=1`);
    await w.until("the stream to end", (x) => x.ended, 5000);
  });

  it("refuses a resourceVersion that is not a number", async () => {
    const res = await fetch(`${tenant.baseUrl}${runnersPath(NS)}?watch=true&resourceVersion=abc`, { headers: { Authorization: `Bearer ${agentToken}` } });
    expect(res.status).toBe(400);
  });
});

describe("the agent's Role on the stand-in", () => {
  it("allows the agent to list and watch in its namespaces, and nowhere else", async () => {
    expect((await list(NS)).status).toBe(200);
    const w = watch(NS, "");
    await w.ready;
    expect(w.status).toBe(200);
    w.close();
    const elsewhere = watch("default", "");
    await elsewhere.ready;
    expect(elsewhere.status).toBe(403);
    const calls = await tenant.calls();
    expect(calls.some((c) => c.query["watch"] === "true" && c.status === 403 && c.user === "system:serviceaccount:arc-reaper-agent:arc-reaper-agent")).toBe(
      true,
    );
  });

  it("refuses watch to a Role without the watch verb (direct mode's get/list/delete)", async () => {
    expect(reaperRules()[0]?.verbs).not.toContain("watch");
    expect((await list(NS, reaperToken)).status).toBe(200);
    const w = watch(NS, "", reaperToken);
    await w.ready;
    expect(w.status).toBe(403);
  });
});
