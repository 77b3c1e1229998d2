// Strict cluster answers: what a Cloudflare Access login, a proxy's HTML or an
// empty object says is never read as the API server's word. A list that is not
// an EphemeralRunnerList, a read that is not the EphemeralRunner asked for, a
// delete that is not the object or a success Status, a 404 that is not a
// Kubernetes Status: each is an error that names what was wrong (never the
// body), and no credential ever leaves for another host.
import { describe, expect, inject, it } from "vitest";
import { HttpMethod, RequestContext } from "@kubernetes/client-node";
import { clusterFor } from "../../../src/cluster/cluster-for.ts";
import { ClusterError, createCluster, type Cluster } from "../../../src/cluster/ephemeral-runners.ts";
import { fetchHttpLibrary } from "../../../src/cluster/fetch-http-library.ts";
import { checkHttpAnswer, UnacceptableAnswer } from "../../../src/cluster/http-answer.ts";
import { accessFaults, ACCESS_TEAM_ORIGIN, PAGE_SECRET, type AccessAnswer } from "../../standins/kube/access-faults-client.ts";
import { createKubeTenant, makeEphemeralRunner, type KubeTenant, type StoredEphemeralRunner } from "../../standins/kube/control.ts";
import { before, stack } from "../support/stack.ts";
import { adminRunners } from "../support/worker.ts";

const NS = "arc-runners";
const ACCESS = { clientId: "access-client-id.access", clientSecret: "access-client-secret-0123456789abcdef" };
const ACCESS_HINT = "the Access service token (KUBE_ACCESS_CLIENT_ID, KUBE_ACCESS_CLIENT_SECRET) is missing, expired or not allowed by the Access policy";

interface World {
  kube: KubeTenant;
  cluster: Cluster;
  runner: StoredEphemeralRunner;
  faults: ReturnType<typeof accessFaults>;
  sinkOrigin: string;
}

async function world(): Promise<World> {
  const kube = await createKubeTenant(inject("kubeStandinUrl"));
  const runner = await kube.seed(makeEphemeralRunner({ namespace: NS, scaleSet: NS, workflowRunId: 7 }));
  // A short timeout: code that followed a redirect to the Internet must not hang the test.
  const cluster = createCluster({ apiUrl: kube.baseUrl, token: kube.adminToken, access: ACCESS, timeoutMs: 3000 });
  const faults = accessFaults(kube);
  const sinkOrigin = new URL((await faults.sink()).url).origin;
  return { kube, cluster, runner, faults, sinkOrigin };
}

/** The words each Access-style answer must be named with (after "HTTP <status>"). */
function expectedWhy(answer: AccessAnswer, sinkOrigin: string, kind: string): string {
  switch (answer) {
    case "access-login":
      return `HTTP 302: a redirect to a Cloudflare Access login at ${ACCESS_TEAM_ORIGIN}: ${ACCESS_HINT}`;
    case "access-login-local":
      return `HTTP 302: a redirect to a Cloudflare Access login at ${sinkOrigin}: ${ACCESS_HINT}`;
    case "redirect-local":
      return `HTTP 302: a redirect to ${sinkOrigin} (redirects are never followed)`;
    case "html-200":
      return 'HTTP 200 with content-type "text/html", not JSON';
    case "empty-object-200":
      return `HTTP 200: expected kind ${kind}, got no kind`;
    case "html-404":
      return 'HTTP 404 with content-type "text/html", not JSON';
  }
}

const STATUS: Record<AccessAnswer, number> = {
  "access-login": 302,
  "access-login-local": 302,
  "redirect-local": 302,
  "html-200": 200,
  "empty-object-200": 200,
  "html-404": 404,
};

const ANSWERS: AccessAnswer[] = ["access-login", "access-login-local", "redirect-local", "html-200", "empty-object-200", "html-404"];

async function thrown(p: Promise<unknown>): Promise<ClusterError> {
  const e = await p.then(
    (v) => {
      throw new Error(`expected a ClusterError, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(ClusterError);
  return e as ClusterError;
}

/** Nothing of the body, the login URL's query or the credentials in a message. */
function expectNoLeak(message: string): void {
  for (const secret of [PAGE_SECRET, "kid=", "meta=", "<html", ACCESS.clientSecret]) expect(message).not.toContain(secret);
}

async function expectSinkUntouched(w: World): Promise<void> {
  expect((await w.faults.sink()).calls).toEqual([]);
}

describe("an Access-style answer is an error, never the cluster's word", () => {
  it.each(ANSWERS)("list answered with %s: ClusterError naming it, nothing sent elsewhere", async (answer) => {
    const w = await world();
    await w.faults.add({ answer, match: { verb: "list" } });
    const e = await thrown(w.cluster.listRunners(NS));
    expect(e.message).toBe(`listing ephemeralrunners in ${NS}: ${expectedWhy(answer, w.sinkOrigin, '"EphemeralRunnerList"')}`);
    expect(e.status).toBe(STATUS[answer]);
    expectNoLeak(e.message);
    await expectSinkUntouched(w);
  });

  it.each(ANSWERS)("read answered with %s: ClusterError naming it (a 404 page is not 'not found')", async (answer) => {
    const w = await world();
    await w.faults.add({ answer, match: { verb: "get" } });
    const e = await thrown(w.cluster.readRunner(NS, w.runner.metadata.name));
    expect(e.message).toBe(`reading ephemeralrunner ${NS}/${w.runner.metadata.name}: ${expectedWhy(answer, w.sinkOrigin, '"EphemeralRunner"')}`);
    expect(e.status).toBe(STATUS[answer]);
    expectNoLeak(e.message);
    await expectSinkUntouched(w);
  });

  it.each(ANSWERS)("delete answered with %s: failed (not deleted, not gone), naming it", async (answer) => {
    const w = await world();
    await w.faults.add({ answer, match: { verb: "delete" } });
    const outcome = await w.cluster.deleteRunner({ namespace: NS, name: w.runner.metadata.name, uid: w.runner.metadata.uid });
    expect(outcome).toEqual({ kind: "failed", status: STATUS[answer], why: expectedWhy(answer, w.sinkOrigin, '"EphemeralRunner" or "Status"') });
    expectNoLeak(JSON.stringify(outcome));
    await expectSinkUntouched(w);
    expect((await w.kube.get(NS, w.runner.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
  });

  it("the fault touches only the calls it matches: the same cluster lists, reads and deletes once it is gone", async () => {
    const w = await world();
    await w.faults.add({ answer: "html-200", match: { verb: "list" }, times: 1 });
    await thrown(w.cluster.listRunners(NS));
    expect((await w.cluster.listRunners(NS)).map((r) => r.uid)).toEqual([w.runner.metadata.uid]);
    expect((await w.cluster.readRunner(NS, w.runner.metadata.name))?.uid).toBe(w.runner.metadata.uid);
    expect(await w.cluster.deleteRunner({ namespace: NS, name: w.runner.metadata.name, uid: w.runner.metadata.uid })).toEqual({ kind: "deleted" });
    expect((await w.kube.get(NS, w.runner.metadata.name))?.metadata.deletionTimestamp).toEqual(expect.any(String));
  });
});

describe("credentials never go to another host", () => {
  it("a redirect to another server on list, read and delete: that server receives no request at all", async () => {
    const w = await world();
    const settle = (p: Promise<unknown>) =>
      p.then(
        (v) => ({ value: v }),
        (e: unknown) => ({ error: e }),
      );
    await w.faults.add({ answer: "access-login-local" });
    const outcomes = [
      await settle(w.cluster.listRunners(NS)),
      await settle(w.cluster.readRunner(NS, w.runner.metadata.name)),
      await settle(w.cluster.deleteRunner({ namespace: NS, name: w.runner.metadata.name, uid: w.runner.metadata.uid })),
    ];
    await w.faults.clear();
    await w.faults.add({ answer: "redirect-local" });
    outcomes.push(await settle(w.cluster.listRunners(NS)));
    // First what matters most: nothing, let alone the bearer token or the Access secret, reached the other host.
    await expectSinkUntouched(w);
    expect(outcomes.map((o) => ("error" in o ? o.error instanceof ClusterError : o.value))).toEqual([
      true,
      true,
      expect.objectContaining({ kind: "failed" }),
      true,
    ]);
    // The API server saw each call (so the redirects were answered), the sink none.
    expect((await w.kube.calls()).map((c) => `${c.method} ${c.status}`)).toEqual(["GET 302", "GET 302", "DELETE 302", "GET 302"]);
  });

  it("the sink does record what reaches it (so 'received nothing' above can fail)", async () => {
    const w = await world();
    const { url, tenantQuery } = await w.faults.sink();
    const res = await fetch(`${url}/cdn-cgi/access/login/probe?${tenantQuery}`, {
      headers: { authorization: "Bearer probe", "cf-access-client-secret": "probe" },
    });
    await res.text();
    const { calls } = await w.faults.sink();
    expect(calls).toEqual([expect.objectContaining({ method: "GET", credentials: true })]);
  });
});

describe("the shape of each answer is checked", () => {
  const list = (items: unknown[]) =>
    JSON.stringify({ kind: "EphemeralRunnerList", apiVersion: "actions.github.com/v1alpha1", metadata: { resourceVersion: "1" }, items });

  it("a list item without metadata.uid fails the whole namespace, not just that item", async () => {
    const w = await world();
    const { uid: _uid, ...noUid } = w.runner.metadata;
    await w.kube.addFault({ match: { method: "GET" }, rawBody: list([w.runner, { ...w.runner, metadata: { ...noUid, name: "arc-runners-no-uid" } }]) });
    const e = await thrown(w.cluster.listRunners(NS));
    expect(e.message).toBe(`listing ephemeralrunners in ${NS}: HTTP 200: EphemeralRunnerList.items[1].metadata.uid: expected a non-empty string, got nothing`);
  });

  it("a list item that is not an object fails the namespace", async () => {
    const w = await world();
    await w.kube.addFault({ match: { method: "GET" }, rawBody: list([w.runner, "arc-runners-x"]) });
    expect((await thrown(w.cluster.listRunners(NS))).message).toBe(
      `listing ephemeralrunners in ${NS}: HTTP 200: EphemeralRunnerList.items[1]: expected an object, got "arc-runners-x"`,
    );
  });

  it("a list of another kind, or without items, is an error", async () => {
    const w = await world();
    await w.kube.addFault({ match: { method: "GET" }, rawBody: JSON.stringify({ kind: "PodList", items: [] }), times: 1 });
    expect((await thrown(w.cluster.listRunners(NS))).message).toBe(
      `listing ephemeralrunners in ${NS}: HTTP 200: expected kind "EphemeralRunnerList", got kind "PodList"`,
    );
    await w.kube.addFault({ match: { method: "GET" }, rawBody: JSON.stringify({ kind: "EphemeralRunnerList", metadata: {} }), times: 1 });
    expect((await thrown(w.cluster.listRunners(NS))).message).toBe(
      `listing ephemeralrunners in ${NS}: HTTP 200: EphemeralRunnerList.items: expected an array, got nothing`,
    );
  });

  it("a JSON content-type with a body that is not JSON is named without echoing the body", async () => {
    const w = await world();
    await w.kube.addFault({ match: { method: "GET" }, rawBody: `<html>${PAGE_SECRET}</html>` });
    const e = await thrown(w.cluster.listRunners(NS));
    expect(e.message).toBe(`listing ephemeralrunners in ${NS}: HTTP 200: the body is not valid JSON`);
  });

  it("a read answering another object's name is an error", async () => {
    const w = await world();
    await w.kube.addFault({
      match: { method: "GET" },
      rawBody: JSON.stringify({ ...w.runner, metadata: { ...w.runner.metadata, name: "arc-runners-other" } }),
    });
    const e = await thrown(w.cluster.readRunner(NS, w.runner.metadata.name));
    expect(e.message).toBe(`reading ephemeralrunner ${NS}/${w.runner.metadata.name}: HTTP 200: an EphemeralRunner of another name`);
  });

  it("a 404 whose JSON body is not a Kubernetes Status is an error on read and a failure on delete", async () => {
    const w = await world();
    await w.kube.addFault({ match: {}, status: 404, rawBody: JSON.stringify({ error: "no such route", code: 404 }) });
    const e = await thrown(w.cluster.readRunner(NS, w.runner.metadata.name));
    expect(e.message).toBe(`reading ephemeralrunner ${NS}/${w.runner.metadata.name}: HTTP 404: the body is not a Kubernetes Status`);
    // The wrapped error keeps what it wraps: the client's ApiException with its code.
    expect(e.cause).toMatchObject({ code: 404 });
    expect(await w.cluster.deleteRunner({ namespace: NS, name: w.runner.metadata.name, uid: w.runner.metadata.uid })).toEqual({
      kind: "failed",
      status: 404,
      why: "HTTP 404: the body is not a Kubernetes Status",
    });
  });

  it("a 404 Kubernetes Status means not there: read is undefined, delete is gone", async () => {
    const w = await world();
    expect(await w.cluster.readRunner(NS, "arc-runners-nobody")).toBeUndefined();
    expect(await w.cluster.deleteRunner({ namespace: NS, name: "arc-runners-nobody", uid: "00000000-0000-0000-0000-000000000000" })).toEqual({ kind: "gone" });
  });

  it("a 409 Status on delete saying the uid precondition failed (the name is another object now) is gone, as the agent treats it; any other 409 failed", async () => {
    const w = await world();
    expect(await w.cluster.deleteRunner({ namespace: NS, name: w.runner.metadata.name, uid: "00000000-0000-0000-0000-000000000409" })).toEqual({
      kind: "gone",
    });
    expect((await w.kube.calls()).filter((c) => c.method === "DELETE").map((c) => c.status)).toEqual([409]);
    // A Conflict Status for another reason (the stand-in's: "the object has been modified") says nothing of the object.
    await w.kube.addFault({ match: { method: "DELETE" }, status: 409, times: 1 });
    expect(await w.cluster.deleteRunner({ namespace: NS, name: w.runner.metadata.name, uid: w.runner.metadata.uid })).toEqual({
      kind: "failed",
      status: 409,
      why: `HTTP 409: Operation cannot be fulfilled on ephemeralrunners.actions.github.com "${w.runner.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
    });
    expect((await w.kube.get(NS, w.runner.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
    // A 409 whose body is not a Kubernetes Status (a proxy) stays a failure.
    await w.kube.addFault({ match: { method: "DELETE" }, status: 409, rawBody: JSON.stringify({ error: "conflict" }), times: 1 });
    expect(await w.cluster.deleteRunner({ namespace: NS, name: w.runner.metadata.name, uid: w.runner.metadata.uid })).toMatchObject({
      kind: "failed",
      status: 409,
    });
  });

  it("a delete answering a Status that is not Success, or another object, failed", async () => {
    const w = await world();
    const target = { namespace: NS, name: w.runner.metadata.name, uid: w.runner.metadata.uid };
    await w.kube.addFault({
      match: { method: "DELETE" },
      rawBody: JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code: 200 }),
      times: 1,
    });
    expect(await w.cluster.deleteRunner(target)).toEqual({ kind: "failed", status: 200, why: 'HTTP 200: a Status that is not "Success"' });
    await w.kube.addFault({
      match: { method: "DELETE" },
      rawBody: JSON.stringify({ ...w.runner, metadata: { ...w.runner.metadata, name: "arc-runners-other" } }),
      times: 1,
    });
    expect(await w.cluster.deleteRunner(target)).toEqual({ kind: "failed", status: 200, why: "HTTP 200: an EphemeralRunner of another name" });
  });

  it("a delete answering a success Status is deleted", async () => {
    const w = await world();
    await w.kube.addFault({
      match: { method: "DELETE" },
      rawBody: JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details: { name: w.runner.metadata.name } }),
      times: 1,
    });
    expect(await w.cluster.deleteRunner({ namespace: NS, name: w.runner.metadata.name, uid: w.runner.metadata.uid })).toEqual({ kind: "deleted" });
  });
});

describe("clusterFor: direct mode's cluster", () => {
  it("talks to KUBE_API_URL", async () => {
    const w = await world();
    const direct = clusterFor({ mode: "direct", apiUrl: w.kube.baseUrl, token: w.kube.adminToken, name: "default" });
    expect((await direct.listRunners(NS)).map((r) => r.uid)).toEqual([w.runner.metadata.uid]);
  });
});

describe("a sweep through Access-style answers keeps every runner", () => {
  const NOW = Date.now() + 86_400_000; // a day ahead: no ledger alarm fires on the real clock meanwhile

  // access-login-local: a client that followed the redirect would get the login page (200 HTML) from the sink.
  it.each(["access-login-local", "html-200", "empty-object-200"] as const)("a list answered with %s closes nothing as gone", async (answer) => {
    const s = await stack();
    const er = await s.runner({ name: `arc-runners-abcde-runner-${answer}`, workflowRunId: 800 });
    await s.jobStarted({ runner: er.metadata.name, runId: 800, jobId: 8000, startedAt: before(NOW, 60) });
    await accessFaults(s.kube).add({ answer, match: { verb: "list" } });
    await s.sweep(NOW);
    expect((await adminRunners(s.env)).runners).toEqual([expect.objectContaining({ name: er.metadata.name, state: "running" })]);
  });

  it.each(["html-200", "empty-object-200", "html-404"] as const)(
    "a delete answered with %s is neither reaped nor gone; the next sweep reaps",
    async (answer) => {
      const s = await stack();
      const er = await s.runner({ name: `arc-runners-abcde-runner-${answer}`, workflowRunId: 801 });
      await s.jobCompleted({
        runner: er.metadata.name,
        runId: 801,
        jobId: 8010,
        startedAt: before(NOW, 900),
        completedAt: before(NOW, 600),
        conclusion: "cancelled",
      });
      await accessFaults(s.kube).add({ answer, match: { verb: "delete" }, times: 1 });
      await s.sweep(NOW);
      expect((await adminRunners(s.env)).runners).toEqual([expect.objectContaining({ name: er.metadata.name, state: "finished" })]);
      await s.sweep(NOW + 60_000);
      expect((await adminRunners(s.env)).runners).toEqual([expect.objectContaining({ name: er.metadata.name, state: "reaped" })]);
      expect((await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toEqual(expect.any(String));
    },
  );
});

describe("the HTTP edge on its own", () => {
  const answer = (status: number, headers: Record<string, string>, body = "{}") =>
    checkHttpAnswer(status, new Headers(headers), body, "https://kube.example.com/apis/x");
  const why = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(UnacceptableAnswer);
      return (e as Error).message;
    }
    throw new Error("expected an UnacceptableAnswer");
  };

  it("names an Access login by host (any case) or by a relative /cdn-cgi/access/ path, and shows only the origin", () => {
    expect(why(() => answer(302, { location: "https://TEAM.CloudflareAccess.com/cdn-cgi/access/login/kube?kid=abc&meta=tok" }))).toBe(
      `HTTP 302: a redirect to a Cloudflare Access login at https://team.cloudflareaccess.com: ${ACCESS_HINT}`,
    );
    expect(why(() => answer(307, { location: "/cdn-cgi/access/login/kube.example.com?redirect_url=%2F" }))).toBe(
      `HTTP 307: a redirect to a Cloudflare Access login at https://kube.example.com: ${ACCESS_HINT}`,
    );
    expect(why(() => answer(301, { location: "https://evil.example.net/cloudflareaccess.com?token=x" }))).toBe(
      "HTTP 301: a redirect to https://evil.example.net (redirects are never followed)",
    );
    expect(why(() => answer(302, {}))).toBe("HTTP 302: a redirect with no Location (redirects are never followed)");
  });

  it("accepts JSON media types only, and a body that parses", () => {
    expect(answer(200, { "content-type": "application/json; charset=utf-8" }, '{"kind":"X"}')).toEqual({ kind: "X" });
    expect(answer(200, { "content-type": "application/merge-patch+json" })).toEqual({});
    expect(why(() => answer(200, {}))).toBe("HTTP 200 with no content-type, not JSON");
    expect(why(() => answer(503, { "content-type": "text/plain" }, "upstream connect error"))).toBe('HTTP 503 with content-type "text/plain", not JSON');
    expect(why(() => answer(200, { "content-type": "application/json" }, ""))).toBe("HTTP 200: the body is not valid JSON");
  });

  it("refuses to send anything to another origin than the API server's", async () => {
    let sent = 0;
    const library = fetchHttpLibrary({ origin: "https://kube.example.com", timeoutMs: 1000, onRequest: () => sent++ });
    const request = new RequestContext("http://127.0.0.1:9/apis/actions.github.com/v1alpha1", HttpMethod.GET);
    const error = await library
      .send(request)
      .toPromise()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnacceptableAnswer);
    expect((error as Error).message).toBe("refusing to send a request to http://127.0.0.1:9, not the API server's origin");
    expect(sent).toBe(0);
  });
});
