// A cluster no longer watched (issue 46): direct mode moved to another cluster
// (KUBE_CLUSTER_NAME and KUBE_API_URL changed), and the old cluster's rows are
// kept while something was heard of them within the history window, then
// closed unjudged with the code Unwatched. Nothing is deleted in either
// cluster: nobody looks at the old one to judge its runner, and the log and the
// admin views say so.
import { inject, describe, expect, it, vi } from "vitest";
import { createKubeTenant } from "../../standins/kube/control.ts";
import { deletes } from "../support/kube-calls.ts";
import { before, NS, stack } from "../support/stack.ts";
import { ADMIN_TOKEN, adminRunners, call, ledgerOf } from "../support/worker.ts";

const DAY = 86_400_000;

describe("rows of a cluster no longer watched", () => {
  it("close after the history window with the code Unwatched, and nothing is deleted", async () => {
    const s = await stack({ KUBE_CLUSTER_NAME: "old", REAPER_HISTORY_DAYS: "7" });
    const er = await s.runner({ name: "arc-runners-abcde-unwatched1", workflowRunId: 800 });
    await s.jobStarted({ runner: er.metadata.name, runId: 800, jobId: 8001, startedAt: before(Date.now(), 60) });
    await s.sweep(Date.now());
    expect((await adminRunners(s.env)).runners).toEqual([expect.objectContaining({ cluster: "old", state: "running" })]);

    // The operator points arc-reaper at another cluster: the old one is no longer watched.
    const other = await createKubeTenant(inject("kubeStandinUrl"), { namespaces: [NS] });
    Object.assign(s.env, { KUBE_CLUSTER_NAME: "new", KUBE_API_URL: other.baseUrl, KUBE_TOKEN: other.adminToken });
    const vars = Object.fromEntries(Object.entries(s.env).filter((e): e is [string, string] => typeof e[1] === "string"));
    await ledgerOf(s.env).useTestSettings(vars);

    await s.sweep(Date.now() + 6 * DAY); // within the history: kept, and says why
    expect((await adminRunners(s.env)).runners[0]).toMatchObject({ state: "running", code: "CannotJudge" });

    const log = vi.spyOn(console, "log");
    await s.sweep(Date.now() + 8 * DAY); // nothing heard of it for over the history of 7 days
    const lines = log.mock.calls.map(([l]) => JSON.parse(String(l)) as Record<string, unknown>);
    log.mockRestore();
    const [closed] = (await adminRunners(s.env)).runners;
    expect(closed).toMatchObject({ name: er.metadata.name, cluster: "old", state: "gone", code: "Unwatched" });
    expect(closed?.reason).toMatch(/its cluster old is no longer watched \(direct mode watches new alone \(KUBE_CLUSTER_NAME\)\).*nothing deleted$/);
    expect(lines).toContainEqual(expect.objectContaining({ msg: "decision", runner: er.metadata.name, code: "Unwatched" }));
    expect(await deletes(s)).toEqual([]);
    expect((await other.calls()).filter((c) => c.method === "DELETE")).toEqual([]);
    expect((await s.kube.get(NS, er.metadata.name))?.metadata.deletionTimestamp).toBeUndefined(); // still there, never touched

    const page = await call(s.env, new Request("https://arc-reaper.test/admin?state=gone", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
    expect(await page.text()).toContain("closed unjudged: its cluster is no longer watched");
  });
});
