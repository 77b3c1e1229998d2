// Direct mode's cluster (src/cluster/ephemeral-runners.ts createCluster, over fetch-http-library.ts):
// each call's request as the API server sees it, and its answers read, against a fetch stub.
import { afterEach, describe, expect, it, vi } from "vitest";
import { ClusterError, createCluster } from "../../../src/cluster/ephemeral-runners.ts";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";

let uids = 0;
/** An EphemeralRunner as the API server sends it: with the uid and creation time it assigns. */
function runner(o: Parameters<typeof makeEphemeralRunner>[0]) {
  const r = makeEphemeralRunner(o);
  return { ...r, metadata: { ...r.metadata, uid: `00000000-0000-0000-0000-${String(++uids).padStart(12, "0")}`, creationTimestamp: "2026-12-01T10:00:00Z" } };
}

const API = "https://kube.example:6443";
const NS = "arc-runners";
const json = (status: number, body: unknown, type = "application/json") => new Response(JSON.stringify(body), { status, headers: { "content-type": type } });
const status = (code: number, reason: string, message: string) => ({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message });
const list = (items: unknown[], cont?: string) => ({
  kind: "EphemeralRunnerList",
  apiVersion: "actions.github.com/v1alpha1",
  metadata: { resourceVersion: "1", ...(cont ? { continue: cont } : {}) },
  items,
});

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}
function api(answers: Response[]) {
  const seen: Seen[] = [];
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    seen.push({ method: init.method ?? "GET", url: String(url), headers, ...(init.body ? { body: String(init.body) } : {}) });
    expect(init.redirect).toBe("manual");
    const next = answers.shift();
    if (!next) throw new Error("no more answers");
    return next;
  });
  let requests = 0;
  const cluster = createCluster({ apiUrl: API, token: "kube-token", access: { clientId: "cid", clientSecret: "csecret" }, onRequest: () => void requests++ });
  return { cluster, seen, requests: () => requests };
}
afterEach(() => vi.unstubAllGlobals());

describe("createCluster", () => {
  it("lists a namespace page by page, with the bearer and the Access headers", async () => {
    const a = runner({ namespace: NS, scaleSet: "set", name: "set-runner-a" });
    const b = runner({ namespace: NS, scaleSet: "set", name: "set-runner-b", workflowRunId: 9001 });
    const { cluster, seen, requests } = api([json(200, list([a], "tok-2")), json(200, list([b]))]);
    const runners = await cluster.listRunners(NS);
    expect(runners.map((r) => [r.name, r.workflowRunId])).toEqual([
      ["set-runner-a", undefined],
      ["set-runner-b", 9001],
    ]);
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ["GET", `${API}/apis/actions.github.com/v1alpha1/namespaces/arc-runners/ephemeralrunners?limit=500`],
      ["GET", `${API}/apis/actions.github.com/v1alpha1/namespaces/arc-runners/ephemeralrunners?limit=500&continue=tok-2`],
    ]);
    expect(seen[0]?.headers).toMatchObject({
      accept: "application/json",
      authorization: "Bearer kube-token",
      "cf-access-client-id": "cid",
      "cf-access-client-secret": "csecret",
    });
    expect(requests()).toBe(2);
  });

  it("names the namespace and the API server's answer when a list fails", async () => {
    const forbidden = api([json(403, status(403, "Forbidden", 'ephemeralrunners is forbidden: User "x" cannot list'))]);
    const error = await forbidden.cluster.listRunners(NS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClusterError);
    expect(error).toMatchObject({ status: 403 });
    expect((error as Error).message).toMatch(/^listing ephemeralrunners in arc-runners: .*forbidden/);
    const unauthorized = api([json(401, status(401, "Unauthorized", "Unauthorized"))]);
    expect(await unauthorized.cluster.listRunners(NS).catch((e: unknown) => e)).toMatchObject({ status: 401 });
    const html = api([new Response("<html>login</html>", { status: 200, headers: { "content-type": "text/html" } })]);
    const htmlError = await html.cluster.listRunners(NS).catch((e: unknown) => e);
    expect(htmlError).toBeInstanceOf(ClusterError);
    expect((htmlError as Error).message).toMatch(/^listing ephemeralrunners in arc-runners: /);
  });

  it("encodes the namespace into the list's path", async () => {
    const { cluster, seen } = api([json(200, list([]))]);
    expect(await cluster.listRunners("a/b c")).toEqual([]);
    expect(seen[0]?.url).toBe(`${API}/apis/actions.github.com/v1alpha1/namespaces/a%2Fb%20c/ephemeralrunners?limit=500`);
  });

  it("reads a runner by name: found, absent (404), or an error naming it", async () => {
    const r = runner({ namespace: NS, scaleSet: "set", name: "set-runner-c", workflowRunId: 7 });
    const found = api([json(200, r)]);
    expect(await found.cluster.readRunner(NS, "set-runner-c")).toMatchObject({ namespace: NS, name: "set-runner-c", workflowRunId: 7 });
    expect(found.seen.map((s) => [s.method, s.url])).toEqual([
      ["GET", `${API}/apis/actions.github.com/v1alpha1/namespaces/arc-runners/ephemeralrunners/set-runner-c`],
    ]);
    const absent = api([json(404, status(404, "NotFound", 'ephemeralrunners "set-runner-c" not found'))]);
    expect(await absent.cluster.readRunner(NS, "set-runner-c")).toBeUndefined();
    const failed = api([json(500, status(500, "InternalError", "etcd is down"))]);
    const error = await failed.cluster.readRunner(NS, "set-runner-c").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClusterError);
    expect(error).toMatchObject({ status: 500 });
    expect((error as Error).message).toMatch(/^reading ephemeralrunner arc-runners\/set-runner-c: /);
  });

  it("deletes by uid: deleted, gone on 404, failed on anything else", async () => {
    const target = { namespace: NS, name: "set-runner-d", uid: "u-d" };
    const deleted = api([json(200, { kind: "Status", apiVersion: "v1", status: "Success" })]);
    expect(await deleted.cluster.deleteRunner(target)).toEqual({ kind: "deleted" });
    expect(deleted.seen[0]?.method).toBe("DELETE");
    expect(deleted.seen[0]?.url).toBe(`${API}/apis/actions.github.com/v1alpha1/namespaces/arc-runners/ephemeralrunners/set-runner-d`);
    expect(JSON.parse(deleted.seen[0]?.body ?? "{}")).toMatchObject({ preconditions: { uid: "u-d" } });
    const gone = api([json(404, status(404, "NotFound", "not found"))]);
    expect(await gone.cluster.deleteRunner(target)).toEqual({ kind: "gone" });
    const failed = api([json(500, status(500, "InternalError", "etcd is down"))]);
    expect(await failed.cluster.deleteRunner(target)).toMatchObject({ kind: "failed", status: 500 });
  });

  it("finishes a held deletion with a JSON patch of the finalizers it saw", async () => {
    const target = { namespace: NS, name: "set-runner-e", uid: "u-e" };
    const finished = api([json(200, runner({ namespace: NS, scaleSet: "set", name: "set-runner-e" }))]);
    expect(await finished.cluster.finishDeletion?.(target, ["ephemeralrunner.actions.github.com/finalizer"])).toEqual({ kind: "finished" });
    expect(finished.seen[0]?.method).toBe("PATCH");
    expect(finished.seen[0]?.headers["content-type"]).toMatch(/json-patch\+json/);
    const gone = api([json(404, status(404, "NotFound", "not found"))]);
    expect(await gone.cluster.finishDeletion?.(target, [])).toEqual({ kind: "gone" });
    const conflict = api([json(422, status(422, "Invalid", "test failed"))]);
    expect(await conflict.cluster.finishDeletion?.(target, [])).toMatchObject({ kind: "conflict" });
  });
});
