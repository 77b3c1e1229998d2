// GET /admin/runners and /admin/runners/{name} (src/http/admin-runners-route.ts): the query checked,
// each bad parameter named with its value, the ledger asked only for a good one.
import { describe, expect, it } from "vitest";
import type { Settings } from "../../../src/config/settings.ts";
import { isRunnerName, listRunners, runnerStory } from "../../../src/http/admin-runners-route.ts";
import { rig, rpcTarget } from "../support/hono-rig.ts";

const settings = { ledgerName: "ledger-admin" } as Settings;
function admin(story: { jobs: unknown[] } = { jobs: [] }) {
  const queries: unknown[] = [];
  const names: string[] = [];
  const target = rpcTarget({
    runners: async (q: unknown) => {
      queries.push(q);
      return { runners: [], nextCursor: null };
    },
    story: async (name: string) => {
      names.push(name);
      return story;
    },
  });
  const list = rig(settings, { admin: () => target }, { path: "/admin/runners", handler: (c) => listRunners(c, settings) });
  const one = rig(settings, { admin: () => target }, { path: "/admin/runners/:name", handler: (c) => runnerStory(c, settings) });
  const get = async (r: typeof list, path: string) => {
    const res = await r.request(path);
    return { status: res.status, json: await res.json() };
  };
  return {
    list: (q: string) => get(list, `/admin/runners${q}`),
    story: (n: string) => get(one, `/admin/runners/${n}`),
    queries,
    names,
    target,
    rigs: [list, one],
  };
}

describe("listRunners", () => {
  it("asks the ledger for a page with every filter, on the named ledger, disposing the stub", async () => {
    const a = admin();
    expect(await a.list("?state=stuck&repo=octo/repo&cluster=eu-west&limit=500&cursor=1234")).toEqual({ status: 200, json: { runners: [], nextCursor: null } });
    expect(a.queries).toEqual([{ state: "stuck", repo: "octo/repo", cluster: "eu-west", limit: 500, cursor: "1234" }]);
    expect(a.rigs[0]?.names).toEqual(["ledger-admin"]);
    expect(a.target.disposed).toBe(1);
    await a.list("");
    await a.list("?limit=1");
    expect(a.queries.slice(1)).toEqual([
      { state: undefined, repo: undefined, cluster: undefined, limit: undefined, cursor: undefined },
      { state: undefined, repo: undefined, cluster: undefined, limit: 1, cursor: undefined },
    ]);
  });

  it.each([
    ["?state=idle", 'state must be one of running, finished, failed, stuck, reaped, gone, got "idle"'],
    ["?repo=octo", 'repo must be owner/name, got "octo"'],
    ["?cluster=EU_West", 'cluster must be a cluster name (DNS label), got "EU_West"'],
    ["?limit=0", 'limit must be a whole number from 1 to 500, got "0"'],
    ["?limit=501", 'limit must be a whole number from 1 to 500, got "501"'],
    ["?limit=1.5", 'limit must be a whole number from 1 to 500, got "1.5"'],
    ["?limit=", 'limit must be a whole number from 1 to 500, got ""'],
    ["?cursor=abc", 'cursor must be the nextCursor of a previous page, got "abc"'],
  ])("answers %s 400, naming the parameter and its value, without asking the ledger", async (q, error) => {
    const a = admin();
    expect(await a.list(q)).toEqual({ status: 400, json: { error } });
    expect(a.queries).toEqual([]);
  });
});

describe("runnerStory", () => {
  it("answers the story of a runner the ledger knows", async () => {
    const a = admin({ jobs: [{ jobId: 1 }] });
    expect(await a.story("arc-runners-x7k2p-runner-4zq9m")).toEqual({ status: 200, json: { jobs: [{ jobId: 1 }] } });
    expect(a.names).toEqual(["arc-runners-x7k2p-runner-4zq9m"]);
  });

  it("answers 404 for a name the ledger has no job of", async () => {
    const a = admin();
    expect(await a.story("r-1")).toEqual({ status: 404, json: { error: "no runner named r-1 in the ledger" } });
  });

  it("answers 400 for a name that is not a Kubernetes object name, without asking the ledger", async () => {
    const a = admin();
    expect(await a.story("Runner_1")).toEqual({ status: 400, json: { error: 'runner name "Runner_1" is not a Kubernetes object name' } });
    expect(a.names).toEqual([]);
    expect([isRunnerName("r-1"), isRunnerName("R-1"), isRunnerName("")]).toEqual([true, false, false]);
  });
});
