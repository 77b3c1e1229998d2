// The stand-in's Tables (table.ts) against the shape kube-apiserver answers a list of a custom resource with
// `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`: a Name column then the CRD's printer columns, cells by
// jsonPath (null for nothing, numbers as numbers, a date as its age), each row's object a PartialObjectMetadata
// with managedFields, the list's paging; without that Accept the answer is as before; refused on switch (406).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeTenant, jobStartedStatus, makeEphemeralRunner, type KubeTenant } from "../../standins/kube/control.ts";
import { startKubeStandin, type KubeStandin } from "../../standins/kube/server.ts";

const NS = "arc-runners";
const TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1";

let standin: KubeStandin;
beforeAll(async () => {
  standin = await startKubeStandin();
});
afterAll(async () => {
  await standin.close();
});

async function list(t: KubeTenant, accept: string, query = ""): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${t.baseUrl}/apis/actions.github.com/v1alpha1/namespaces/${NS}/ephemeralrunners${query}`, {
    headers: { accept, authorization: `Bearer ${t.adminToken}` },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** What kube-apiserver answers (shape, key for key) for one EphemeralRunner of ARC 0.14.2 with a job. */
const REAL_SHAPED = {
  kind: "Table",
  apiVersion: "meta.k8s.io/v1",
  metadata: { resourceVersion: expect.any(String) },
  columnDefinitions: [
    { name: "Name", type: "string", format: "name", description: expect.stringMatching(/^Name must be unique within a namespace/), priority: 0 },
    {
      name: "GitHub Config URL",
      type: "string",
      format: "",
      description: "Custom resource definition column (in JSONPath format): .spec.githubConfigUrl",
      priority: 0,
    },
    { name: "RunnerId", type: "number", format: "", description: "Custom resource definition column (in JSONPath format): .status.runnerId", priority: 0 },
    { name: "Status", type: "string", format: "", description: "Custom resource definition column (in JSONPath format): .status.phase", priority: 0 },
    {
      name: "JobRepository",
      type: "string",
      format: "",
      description: "Custom resource definition column (in JSONPath format): .status.jobRepositoryName",
      priority: 0,
    },
    {
      name: "JobWorkflowRef",
      type: "string",
      format: "",
      description: "Custom resource definition column (in JSONPath format): .status.jobWorkflowRef",
      priority: 0,
    },
    {
      name: "WorkflowRunId",
      type: "number",
      format: "",
      description: "Custom resource definition column (in JSONPath format): .status.workflowRunId",
      priority: 0,
    },
    {
      name: "JobDisplayName",
      type: "string",
      format: "",
      description: "Custom resource definition column (in JSONPath format): .status.jobDisplayName",
      priority: 0,
    },
    { name: "JobId", type: "string", format: "", description: "Custom resource definition column (in JSONPath format): .status.jobId", priority: 0 },
    { name: "Message", type: "string", format: "", description: "Custom resource definition column (in JSONPath format): .status.message", priority: 0 },
    { name: "Age", type: "date", format: "", description: "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp", priority: 0 },
  ],
  rows: [
    {
      cells: [
        "arc-runners-x-runner-t1",
        "https://github.com/octo-org",
        1234,
        "Running",
        "octo-org/app",
        expect.any(String),
        42,
        expect.any(String),
        expect.any(String),
        null,
        expect.stringMatching(/^\d+[smhdy]$/),
      ],
      object: {
        kind: "PartialObjectMetadata",
        apiVersion: "meta.k8s.io/v1",
        metadata: expect.objectContaining({
          name: "arc-runners-x-runner-t1",
          namespace: NS,
          uid: expect.any(String),
          resourceVersion: expect.any(String),
          creationTimestamp: expect.any(String),
          labels: expect.objectContaining({ "actions.github.com/scale-set-name": "arc-runners" }),
          ownerReferences: expect.any(Array),
          finalizers: expect.any(Array),
          managedFields: expect.arrayContaining([expect.objectContaining({ manager: expect.any(String), fieldsType: "FieldsV1" })]),
        }),
      },
    },
  ],
};

describe("the stand-in's Tables", () => {
  it("answers a list asking for a Table as kube-apiserver does, and one without that Accept as before", async () => {
    const t = await createKubeTenant(standin.url, { namespaces: [NS] });
    await t.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: "arc-runners-x-runner-t1", runnerId: 1234 }));
    await t.patchStatus(NS, "arc-runners-x-runner-t1", jobStartedStatus({ workflowRunId: 42, jobRepositoryName: "octo-org/app" }));
    const table = await list(t, TABLE, "?includeObject=Metadata");
    expect(table.status).toBe(200);
    expect(table.body).toEqual(REAL_SHAPED);
    // includeObject defaults to Metadata; the plain list is unchanged.
    expect((await list(t, TABLE)).body["rows"]).toEqual(table.body["rows"]);
    const plain = await list(t, "application/json");
    expect(plain.body["kind"]).toBe("EphemeralRunnerList");
    expect((plain.body["items"] as { spec: { spec: unknown } }[])[0]?.spec.spec).toEqual(expect.objectContaining({ containers: expect.any(Array) }));
  });

  it("pages a Table with the list's limit and continue tokens", async () => {
    const t = await createKubeTenant(standin.url, { namespaces: [NS] });
    for (const n of ["a", "b", "c"]) await t.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: `arc-runners-x-runner-${n}` }));
    const first = await list(t, TABLE, "?limit=2");
    const meta = first.body["metadata"] as { continue?: string; remainingItemCount?: number };
    expect((first.body["rows"] as { cells: unknown[] }[]).map((r) => r.cells[0])).toEqual(["arc-runners-x-runner-a", "arc-runners-x-runner-b"]);
    expect(meta.remainingItemCount).toBe(1);
    const second = await list(t, TABLE, `?limit=2&continue=${encodeURIComponent(meta.continue ?? "")}`);
    expect((second.body["rows"] as { cells: unknown[] }[]).map((r) => r.cells[0])).toEqual(["arc-runners-x-runner-c"]);
    expect((second.body["metadata"] as { continue?: string }).continue).toBeUndefined();
  });

  it("on switch: refuses Tables with a 406 Status (a plain answer for an Accept that takes one), or leaves columns out", async () => {
    const t = await createKubeTenant(standin.url, { namespaces: [NS] });
    await t.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: "arc-runners-x-runner-r1" }));
    await t.setTables({ refuse: true });
    const refused = await list(t, TABLE);
    expect(refused).toEqual({
      status: 406,
      body: expect.objectContaining({
        kind: "Status",
        status: "Failure",
        reason: "NotAcceptable",
        code: 406,
        message: expect.stringMatching(/^only the following media types are accepted/),
      }),
    });
    expect((await list(t, `${TABLE},application/json`)).body["kind"]).toBe("EphemeralRunnerList");
    await t.setTables({ refuse: false, withoutColumns: ["WorkflowRunId", "Message"] });
    const names = ((await list(t, TABLE)).body["columnDefinitions"] as { name: string }[]).map((c) => c.name);
    expect(names).toEqual(["Name", "GitHub Config URL", "RunnerId", "Status", "JobRepository", "JobWorkflowRef", "JobDisplayName", "JobId", "Age"]);
  });

  it("as a broken proxy on a fault's mangle: a row cut short, numbers as text, a page cut with more said to come; each call marked", async () => {
    const t = await createKubeTenant(standin.url, { namespaces: [NS] });
    for (const [n, id] of [
      ["a", 11],
      ["b", 12],
      ["c", 13],
    ] as const)
      await t.seed(makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", name: `arc-runners-x-runner-${n}`, runnerId: id }));
    const real = await list(t, TABLE);
    const rows = (b: Record<string, unknown>) => b["rows"] as { cells: unknown[] }[];
    const columns = (real.body["columnDefinitions"] as unknown[]).length;
    expect(rows(real.body).every((r) => r.cells.length === columns)).toBe(true);

    await t.addFault({ match: { verb: "list" }, mangle: "short-row", times: 1 });
    expect(rows((await list(t, TABLE)).body).map((r) => r.cells.length)).toEqual([2, columns, columns]);

    await t.addFault({ match: { verb: "list" }, mangle: "mistyped-cells", times: 1 });
    const mistyped = rows((await list(t, TABLE)).body).map((r) => r.cells[2]);
    expect(mistyped).toEqual(["11", "12", "13"]);

    await t.addFault({ match: { verb: "list" }, mangle: "cut-page", times: 2 });
    const cut = await list(t, TABLE);
    expect(rows(cut.body).map((r) => r.cells[0])).toEqual(["arc-runners-x-runner-a", "arc-runners-x-runner-b"]);
    expect(cut.body["metadata"]).toEqual({ resourceVersion: expect.any(String), remainingItemCount: 1 });
    const cutList = await list(t, "application/json");
    expect((cutList.body["items"] as unknown[]).length).toBe(2);
    expect((cutList.body["metadata"] as { remainingItemCount?: number; continue?: string }).continue).toBeUndefined();

    // Spent: the real answer again; the calls say which answers a mangle changed.
    expect(await list(t, TABLE)).toEqual(real);
    const marked = (await t.calls()).map((c) => c.mangled ?? null);
    expect(marked).toEqual([null, "short-row", "mistyped-cells", "cut-page", "cut-page", null]);
    await expect(t.addFault({ match: { verb: "list" }, mangle: "half-row" as "short-row" })).rejects.toThrow(
      /fault.mangle must be one of short-row, mistyped-cells, cut-page/,
    );
  });
});
