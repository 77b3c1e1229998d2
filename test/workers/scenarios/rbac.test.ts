// The reaper works under exactly the Role of infra/kubernetes (read from the
// manifests and enforced by the stand-in cluster), and that token can do
// nothing beyond it: no pods, no secrets, no patch, no other namespace.
import { expect, inject, it } from "vitest";
import { before, NS, stack } from "../support/stack.ts";
import { adminRunners, runScheduled, settleAlarms } from "../support/worker.ts";

const NOW = Date.now();
const TOKEN = "reaper-sa-token-from-the-secret";

async function reaperUnderRole() {
  const s = await stack();
  const rbac = inject("reaperRbac");
  const { user } = await s.kube.addServiceAccount({ ...rbac.serviceAccount, token: TOKEN, bindings: rbac.bindings });
  s.env.KUBE_TOKEN = TOKEN; // before the first call: the ledger takes the env's settings then
  return { ...s, user, sweep: (now: number) => runScheduled(s.env, now) };
}

it("the manifests bind exactly get, list and delete on ephemeralrunners, and get on the kube-system namespace object", () => {
  expect(inject("reaperRbac")).toEqual({
    serviceAccount: { name: "arc-reaper", namespace: "arc-reaper" },
    bindings: [
      { namespace: NS, rules: [{ apiGroups: ["actions.github.com"], resources: ["ephemeralrunners"], verbs: ["get", "list", "delete"] }] },
      { namespace: "kube-system", rules: [{ apiGroups: [""], resources: ["namespaces"], resourceNames: ["kube-system"], verbs: ["get"] }] },
    ],
  });
});

it("reaps under the Role: the alarm reads the runner and deletes it, the sweep lists", async () => {
  const s = await reaperUnderRole();
  const er = await s.runner({ name: "arc-runners-abcde-runner-rbac", workflowRunId: 321 });
  // Completed 600 s ago: due at once, so the alarm reaps it with one read and one delete.
  await s.jobCompleted({
    runner: er.metadata.name,
    runId: 321,
    jobId: 3210,
    startedAt: before(NOW, 900),
    completedAt: before(NOW, 600),
    conclusion: "cancelled",
  });
  await settleAlarms(s.env);
  expect((await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toEqual(expect.any(String));
  await s.sweep(Date.now());
  const calls = await s.kube.calls();
  expect(calls.every((c) => c.user === "system:serviceaccount:arc-reaper:arc-reaper")).toBe(true);
  // The alarm's read and delete; the sweep's read of the cluster's identity (once), then its list.
  expect(calls.map((c) => `${c.method} ${c.path.endsWith("/kube-system") ? "kube-system " : ""}${c.status}`)).toEqual([
    "GET 200",
    "DELETE 200",
    "GET kube-system 200",
    "GET 200",
  ]);
  expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "reaped" });
});

it.each([
  ["list pods", "GET", `/api/v1/namespaces/${NS}/pods`],
  ["list secrets", "GET", `/api/v1/namespaces/${NS}/secrets`],
  ["list runners in another namespace", "GET", "/apis/actions.github.com/v1alpha1/namespaces/kube-system/ephemeralrunners"],
  ["list runners cluster-wide", "GET", "/apis/actions.github.com/v1alpha1/ephemeralrunners"],
  ["patch a runner", "PATCH", `/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners/arc-runners-abcde-runner-p`],
])("refuses the reaper's token to %s (403 Forbidden)", async (_what, method, path) => {
  const s = await reaperUnderRole();
  await s.runner({ name: "arc-runners-abcde-runner-p" });
  const res = await fetch(`${s.kube.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/merge-patch+json" },
    body: method === "PATCH" ? JSON.stringify({ metadata: { labels: { x: "y" } } }) : undefined,
  });
  expect(res.status).toBe(403);
  expect(await res.json()).toMatchObject({ kind: "Status", reason: "Forbidden", message: expect.stringContaining(`User "${s.user}" cannot`) });
});

it("a namespace outside the Role: the sweep reads 403, deletes nothing there, and keeps with the reason", async () => {
  const s = await reaperUnderRole();
  s.env.REAPER_NAMESPACES = `${NS},other-runners`;
  const er = await s.runner({ name: "arc-runners-abcde-runner-oth", workflowRunId: 322, namespace: "other-runners" });
  await s.jobCompleted({
    runner: er.metadata.name,
    runId: 322,
    jobId: 3220,
    startedAt: before(NOW, 900),
    completedAt: before(NOW, 600),
    conclusion: "cancelled",
  });
  await settleAlarms(s.env); // the alarm reads 403 in other-runners and keeps it
  await s.sweep(NOW);
  expect((await s.kube.get("other-runners", er.metadata.name))?.metadata.deletionTimestamp).toBeUndefined();
  expect((await s.kube.calls()).filter((c) => c.method === "DELETE")).toEqual([]);
  expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "finished" });
});
