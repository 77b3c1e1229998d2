// The three calls on one EphemeralRunner that direct mode and the agent share
// (read-runner.ts, delete-runner.ts, finish-deletion.ts): the request each
// sends, and what each answer means, against a fake of client-node's API that
// answers or throws as the API server (or a proxy, or a timeout) would.
import { ApiException, type HttpInfo } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import type { RunnerApi, Within } from "../../../src/cluster/api-call.ts";
import { deleteOutcome, deleteRunnerByUid } from "../../../src/cluster/delete-runner.ts";
import { finishHeldDeletion, finishOutcome } from "../../../src/cluster/finish-deletion.ts";
import { UnacceptableAnswer } from "../../../src/cluster/http-answer.ts";
import { readRunnerByName } from "../../../src/cluster/read-runner.ts";

const NS = "arc-runners";
const NAME = "arc-runners-abcde";
const UID = "00000000-0000-4000-8000-000000000001";
const TARGET = { namespace: NS, name: NAME, uid: UID };
const FINALIZERS = ["ephemeralrunner.actions.github.com/finalizer"];
const COORDINATES = { group: "actions.github.com", version: "v1alpha1", namespace: NS, plural: "ephemeralrunners", name: NAME };

const status = (code: number, message?: string) => ({ kind: "Status", apiVersion: "v1", status: "Failure", code, ...(message ? { message } : {}) });
/** What client-node throws for an error answer: the body as text. */
const api = (code: number, body: unknown) => new ApiException(code, `HTTP ${code}`, typeof body === "string" ? body : JSON.stringify(body), {});
const object = (o: { name?: string; uid?: string } = {}) => ({
  kind: "EphemeralRunner",
  apiVersion: "actions.github.com/v1alpha1",
  metadata: { namespace: NS, name: o.name ?? NAME, uid: o.uid ?? UID, creationTimestamp: "2026-12-01T10:00:00Z", finalizers: FINALIZERS },
  status: { workflowRunId: 5100 },
});

type Answer = { status: number; body: unknown } | { throws: unknown };

/** client-node's API, answering every call with `answer`; `sent` holds each call's method and parameters. */
function fakeApi(answer: Answer) {
  const sent: { method: string; param: unknown }[] = [];
  const reply = (method: string) => async (param: unknown) => {
    sent.push({ method, param });
    if ("throws" in answer) throw answer.throws;
    return { httpStatusCode: answer.status, data: answer.body } as HttpInfo<unknown>;
  };
  const fake = {
    getNamespacedCustomObjectWithHttpInfo: reply("get"),
    deleteNamespacedCustomObjectWithHttpInfo: reply("delete"),
    patchNamespacedCustomObjectWithHttpInfo: reply("patch"),
  } as unknown as RunnerApi;
  return { api: fake, sent };
}

describe("readRunnerByName", () => {
  it("GETs the object by name and finds it only as the EphemeralRunner of that name", async () => {
    const { api: fake, sent } = fakeApi({ status: 200, body: object() });
    const answer = await readRunnerByName(fake, NS, NAME);
    expect(sent).toEqual([{ method: "get", param: COORDINATES }]);
    expect(answer).toMatchObject({ kind: "found", runner: { name: NAME, uid: UID, workflowRunId: 5100, finalizers: FINALIZERS } });
  });

  it("is absent only on a 404 Status", async () => {
    expect(await readRunnerByName(fakeApi({ throws: api(404, status(404, "not found")) }).api, NS, NAME)).toEqual({ kind: "absent" });
    expect(await readRunnerByName(fakeApi({ throws: api(404, "<html>no</html>") }).api, NS, NAME)).toMatchObject({
      kind: "failed",
      failure: { status: 404, why: "HTTP 404: the body is not a Kubernetes Status" },
    });
  });

  it.each([
    [{ ...object(), kind: "Pod" }, 'HTTP 200: expected kind "EphemeralRunner", got kind "Pod"'],
    [object({ name: "arc-runners-other" }), "HTTP 200: an EphemeralRunner of another name"],
    [{ ...object(), metadata: { name: NAME } }, "HTTP 200: EphemeralRunner.metadata.uid: expected a non-empty string, got nothing"],
  ])("an answer that is not the object asked for fails: %j", async (body, why) => {
    const answer = await readRunnerByName(fakeApi({ status: 200, body }).api, NS, NAME);
    expect(answer).toMatchObject({ kind: "failed", failure: { status: 200, why } });
    expect(answer).not.toHaveProperty("failure.said");
  });

  it("an error answer fails with the API server's words; no answer fails with the error as it came", async () => {
    expect(await readRunnerByName(fakeApi({ throws: api(403, status(403, "forbidden")) }).api, NS, NAME)).toMatchObject({
      kind: "failed",
      failure: { status: 403, why: "HTTP 403: forbidden", said: "forbidden" },
    });
    const down = new Error("connect ECONNREFUSED");
    expect(await readRunnerByName(fakeApi({ throws: down }).api, NS, NAME)).toEqual({
      kind: "failed",
      failure: { status: null, why: "connect ECONNREFUSED", cause: down },
    });
  });

  it("waits through the caller's deadline, named for the read", async () => {
    const named: string[] = [];
    const late: Within = (_call, what) => {
      named.push(what);
      return Promise.reject(new Error(`${what}: no answer within 5 ms`));
    };
    expect(await readRunnerByName(fakeApi({ status: 200, body: object() }).api, NS, NAME, late)).toMatchObject({
      kind: "failed",
      failure: { status: null, why: `read ${NS}/${NAME}: no answer within 5 ms` },
    });
    expect(named).toEqual([`read ${NS}/${NAME}`]);
  });
});

describe("deleteRunnerByUid", () => {
  it("DELETEs with the uid precondition and Background propagation; the object or a success Status is deleted", async () => {
    const { api: fake, sent } = fakeApi({ status: 200, body: object() });
    expect(await deleteRunnerByUid(fake, TARGET)).toEqual({ kind: "deleted" });
    expect(sent).toEqual([{ method: "delete", param: { ...COORDINATES, body: { preconditions: { uid: UID }, propagationPolicy: "Background" } } }]);
    expect(await deleteRunnerByUid(fakeApi({ status: 200, body: { kind: "Status", status: "Success" } }).api, TARGET)).toEqual({ kind: "deleted" });
  });

  it("is gone on a 404 Status and on the uid precondition's 409, saying which", async () => {
    const notFound = await deleteRunnerByUid(fakeApi({ throws: api(404, status(404, "not found")) }).api, TARGET);
    expect(notFound).toMatchObject({ kind: "gone", failure: { status: 404, said: "not found" } });
    const uid = "Precondition failed: UID in precondition: a, UID in object meta: b";
    const replaced = await deleteRunnerByUid(fakeApi({ throws: api(409, status(409, uid)) }).api, TARGET);
    expect(replaced).toMatchObject({ kind: "gone", failure: { status: 409, said: uid } });
    expect([deleteOutcome(notFound), deleteOutcome(replaced)]).toEqual([{ kind: "gone" }, { kind: "gone" }]);
  });

  it.each([
    [api(409, status(409, "the object has been modified")), 409, "HTTP 409: the object has been modified"],
    [api(404, "<html>not found</html>"), 404, "HTTP 404: the body is not a Kubernetes Status"],
    [api(500, status(500)), 500, "HTTP 500"],
    [
      new UnacceptableAnswer(302, "HTTP 302: a redirect to https://x.example (redirects are never followed)"),
      302,
      "HTTP 302: a redirect to https://x.example (redirects are never followed)",
    ],
    [new DOMException("late", "TimeoutError"), null, "timed out"],
  ])("fails on %s, with its status and direct mode's words", async (thrown, code, why) => {
    const answer = await deleteRunnerByUid(fakeApi({ throws: thrown }).api, TARGET);
    expect(answer).toMatchObject({ kind: "failed", failure: { status: code, why, cause: thrown } });
    expect(deleteOutcome(answer)).toEqual({ kind: "failed", status: code, why });
  });

  it.each([
    [{ kind: "Status", status: "Failure" }, 'HTTP 200: a Status that is not "Success"'],
    [object({ name: "arc-runners-other" }), "HTTP 200: an EphemeralRunner of another name"],
    [{}, 'HTTP 200: expected kind "EphemeralRunner" or "Status", got no kind'],
  ])("an answer of 200 that is neither the object nor a success Status fails: %j", async (body, why) => {
    const answer = await deleteRunnerByUid(fakeApi({ status: 200, body }).api, TARGET);
    expect(deleteOutcome(answer)).toEqual({ kind: "failed", status: 200, why });
    expect(answer).not.toHaveProperty("failure.said");
  });

  it("waits through the caller's deadline, named for the delete", async () => {
    const named: string[] = [];
    const within: Within = (call, what) => {
      named.push(what);
      return call;
    };
    expect(await deleteRunnerByUid(fakeApi({ status: 200, body: object() }).api, TARGET, within)).toEqual({ kind: "deleted" });
    expect(named).toEqual([`delete ${NS}/${NAME}`]);
  });

  it("a call that throws before it is sent fails, never throws", async () => {
    const broken = {
      deleteNamespacedCustomObjectWithHttpInfo: () => {
        throw new Error("no server configured");
      },
    } as unknown as RunnerApi;
    expect(deleteOutcome(await deleteRunnerByUid(broken, TARGET))).toEqual({ kind: "failed", status: null, why: "no server configured" });
  });
});

describe("finishHeldDeletion", () => {
  it("PATCHes the patch that tests uid and finalizers; the object answered is finished", async () => {
    const { api: fake, sent } = fakeApi({ status: 200, body: object() });
    const named: string[] = [];
    const within: Within = (call, what) => {
      named.push(what);
      return call;
    };
    expect(await finishHeldDeletion(fake, TARGET, FINALIZERS, within)).toEqual({ kind: "finished" });
    expect(sent).toEqual([
      {
        method: "patch",
        param: {
          ...COORDINATES,
          body: [
            { op: "test", path: "/metadata/uid", value: UID },
            { op: "test", path: "/metadata/finalizers", value: FINALIZERS },
            { op: "remove", path: "/metadata/finalizers" },
          ],
        },
      },
    ]);
    expect(named).toEqual([`patch ${NS}/${NAME}`]);
    expect(finishOutcome({ kind: "finished" })).toEqual({ kind: "finished" });
  });

  it.each([
    [api(404, status(404)), { kind: "gone" }],
    [api(404, "<html>"), { kind: "failed", status: 404, why: "HTTP 404: the body is not a Kubernetes Status" }],
    [api(403, status(403, "no patch")), { kind: "refused", why: "HTTP 403: no patch" }],
    [api(409, status(409, "uid")), { kind: "conflict", why: "HTTP 409: uid" }],
    [api(422, status(422, "test failed")), { kind: "conflict", why: "HTTP 422: test failed" }],
    [api(500, status(500, "etcd")), { kind: "failed", status: 500, why: "HTTP 500: etcd" }],
    [new Error("down"), { kind: "failed", status: null, why: "down" }],
  ])("reads a failed finish patch %s: gone, refused, conflict, or failed with its status", async (thrown, outcome) => {
    const answer = await finishHeldDeletion(fakeApi({ throws: thrown }).api, TARGET, FINALIZERS);
    expect(answer.kind).toBe(outcome.kind);
    expect(finishOutcome(answer)).toEqual(outcome);
  });

  it("a 200 that is not the object fails", async () => {
    expect(finishOutcome(await finishHeldDeletion(fakeApi({ status: 200, body: { kind: "Pod" } }).api, TARGET, FINALIZERS))).toEqual({
      kind: "failed",
      status: 200,
      why: 'HTTP 200: expected kind "EphemeralRunner" or "Status", got kind "Pod"',
    });
  });
});
