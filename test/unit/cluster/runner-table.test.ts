// The Table reader (runner-table.ts): cells found by their column definitions, validated as a full object's
// fields are, metadata from the row's PartialObjectMetadata; a Table it cannot use as a whole is refused
// (the caller lists full objects), a row it cannot read is an error naming it, and nothing is read from either.
import { describe, expect, it } from "vitest";
import { UnacceptableAnswer } from "../../../src/cluster/http-answer.ts";
import { runnersFromList } from "../../../src/cluster/runner-answers.ts";
import { runnersFromTable, TableRefused } from "../../../src/cluster/runner-table.ts";
import { ARC_VERSIONS, jobStartedStatus, makeEphemeralRunner } from "../../standins/kube/control.ts";
import { managedFieldsOf } from "../../standins/kube/managed-fields.ts";
import { printerColumns, tableOf } from "../../standins/kube/table.ts";
import type { JsonObject } from "../../standins/kube/types.ts";

const NS = "arc-runners";
const CREATED = "2026-12-01T10:00:00Z";
let uids = 0;

/** A runner as the API server sends it: uid, creationTimestamp and managedFields added as on create. */
function served(o: Partial<Parameters<typeof makeEphemeralRunner>[0]> = {}): JsonObject {
  const r = makeEphemeralRunner({ namespace: NS, scaleSet: "arc-runners", ...o }) as unknown as JsonObject;
  const meta = { ...(r["metadata"] as JsonObject), uid: `00000000-0000-0000-0000-${String(++uids).padStart(12, "0")}`, creationTimestamp: CREATED };
  const obj = { ...r, metadata: meta };
  return { ...obj, metadata: { ...meta, managedFields: managedFieldsOf(obj, CREATED) } };
}

const list = (items: JsonObject[]) => ({ kind: "EphemeralRunnerList", apiVersion: "actions.github.com/v1alpha1", metadata: { resourceVersion: "7" }, items });
const table = (items: JsonObject[], version: (typeof ARC_VERSIONS)[number] = "0.14.2", without: string[] = []) =>
  tableOf(items, { resourceVersion: "7" }, printerColumns(version, without), new URLSearchParams());
/** What a Table lacks; every other field must read as the full object's. */
const lessWhatTablesLack = <T extends object>(r: T) => {
  const { arcReason: _r, failedAt: _f, runnerVersion: _v, ...rest } = r as T & { arcReason?: unknown; failedAt?: unknown; runnerVersion?: unknown };
  return rest;
};
const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("nothing thrown");
};

describe.each(ARC_VERSIONS)("a Table of ARC %s's CRD", (version) => {
  it("reads every field the full object gives, but status.reason, status.failures and the runner version", () => {
    const busy = served({ arcVersion: version, workflowRunId: 41, jobRepositoryName: "octo-org/app", runnerImage: "ghcr.io/actions/actions-runner:2.330.0" });
    const failed = served({
      arcVersion: version,
      phase: "Failed",
      status: { reason: "PodCreateFailed", message: "admission webhook denied", failures: { "pod-1": "2026-12-01T10:05:00Z" } },
    });
    const deleting = served({ arcVersion: version });
    (deleting["metadata"] as JsonObject)["deletionTimestamp"] = "2026-12-01T11:00:00Z";
    const items = [busy, failed, deleting];
    const full = runnersFromList(200, NS, list(items)).runners;
    const fromTable = runnersFromTable(200, NS, table(items, version));
    expect(fromTable.runners).toEqual(full.map(lessWhatTablesLack));
    expect(full[1]).toMatchObject({ phase: "Failed", arcReason: "PodCreateFailed", arcMessage: "admission webhook denied" });
    expect(fromTable.runners[1]).toMatchObject({ phase: "Failed", arcMessage: "admission webhook denied", scaleSet: "arc-runners" });
    expect(fromTable.runners[0]).toMatchObject({ workflowRunId: 41, jobRepositoryName: "octo-org/app", scaleSet: "arc-runners" });
    expect(fromTable.continueToken).toBeUndefined();
  });
});

describe("the Table reader", () => {
  it("finds cells by their columns' names, in whatever order the columns come", () => {
    const items = [served({ workflowRunId: 9, jobRepositoryName: "octo-org/app" }), served({ phase: "Outdated" })];
    const t = table(items);
    const order = t["columnDefinitions"] as JsonObject[];
    const reversed = order.map((_, i) => order.length - 1 - i);
    const shuffled = {
      ...t,
      columnDefinitions: reversed.map((i) => order[i]!),
      rows: (t["rows"] as JsonObject[]).map((r) => ({ ...r, cells: reversed.map((i) => (r["cells"] as unknown[])[i]) })),
    };
    expect(runnersFromTable(200, NS, shuffled).runners).toEqual(runnersFromTable(200, NS, t).runners);
    expect(runnersFromTable(200, NS, shuffled).runners.map((r) => [r.workflowRunId, r.phase])).toEqual([
      [9, "Running"],
      [undefined, "Outdated"],
    ]);
  });

  it("reads a null cell (the jsonPath found nothing) as no field", () => {
    const r = served({ runnerId: null });
    const t = table([r]);
    expect((t["rows"] as { cells: unknown[] }[])[0]!.cells[2]).toBeNull();
    expect(runnersFromTable(200, NS, t).runners[0]).not.toHaveProperty("runnerId");
    expect(runnersFromTable(200, NS, t).runners[0]).not.toHaveProperty("workflowRunId");
  });

  it("reads a cell of its column's type that the reader cannot take (out of bounds) as no field, as the full reader does", () => {
    const t = table([served({ workflowRunId: 5, jobRepositoryName: "octo-org/app" })]);
    const names = (t["columnDefinitions"] as JsonObject[]).map((c) => c["name"]);
    const rows = t["rows"] as { cells: unknown[] }[];
    for (const [column, bad] of [
      ["RunnerId", 0],
      ["WorkflowRunId", 1.5],
      ["WorkflowRunId", -3],
      ["WorkflowRunId", 2 ** 53],
      ["JobRepository", ""],
    ] as const) {
      const cells = [...rows[0]!.cells];
      cells[names.indexOf(column)] = bad;
      const read = runnersFromTable(200, NS, { ...t, rows: [{ ...rows[0], cells }] }).runners[0]!;
      const field = { RunnerId: "runnerId", WorkflowRunId: "workflowRunId", JobRepository: "jobRepositoryName" }[column];
      expect(read, `${column} ${JSON.stringify(bad)}`).not.toHaveProperty(field);
    }
  });

  it("refuses a row whose cell is of another type than its column's: the namespace is unreadable, never a runner without a run", () => {
    const t = table([served({ workflowRunId: 5, runnerId: 7, jobRepositoryName: "octo-org/app" })]);
    const names = (t["columnDefinitions"] as JsonObject[]).map((c) => c["name"]);
    const rows = t["rows"] as { cells: unknown[] }[];
    for (const [column, bad, type] of [
      ["RunnerId", "1000", "number"],
      ["WorkflowRunId", "5", "number"],
      ["JobRepository", 7, "string"],
      ["Status", { phase: "Failed" }, "string"],
      ["Message", ["x"], "string"],
      ["Age", 12, "date"],
    ] as const) {
      const cells = [...rows[0]!.cells];
      cells[names.indexOf(column)] = bad;
      const e = thrown(() => runnersFromTable(200, NS, { ...t, rows: [{ ...rows[0], cells }] }));
      expect(e, column).toBeInstanceOf(UnacceptableAnswer);
      expect((e as Error).message).toContain(
        `Table.rows[0].cells[${names.indexOf(column)}] (${column}): ${Array.isArray(bad) ? "object" : typeof bad}, not its column's ${type}`,
      );
    }
  });

  it("refuses a row with fewer or more cells than columns (a partial row), never reading it as a runner without a run", () => {
    const t = table([served({ workflowRunId: 5, runnerId: 7 })]);
    const columns = (t["columnDefinitions"] as JsonObject[]).length;
    const rows = t["rows"] as { cells: unknown[] }[];
    for (const cells of [rows[0]!.cells.slice(0, 2), [...rows[0]!.cells, null]]) {
      const e = thrown(() => runnersFromTable(200, NS, { ...t, rows: [{ ...rows[0], cells }] }));
      expect(e).toBeInstanceOf(UnacceptableAnswer);
      expect((e as Error).message).toContain(`Table.rows[0].cells: ${cells.length} cells for ${columns} columns`);
    }
    // Null cells are the API server's "nothing at this path": read as no field.
    const nulls = runnersFromTable(200, NS, { ...t, rows: [{ ...rows[0], cells: rows[0]!.cells.map((c, i) => (i === 1 ? null : c)) }] });
    expect(nulls.runners).toHaveLength(1);
  });

  it("refuses a page that says more items remain but carries no continue token (a cut answer), and reads one that carries it", () => {
    const t = table([served()]);
    for (const metadata of [{ remainingItemCount: 6 }, { remainingItemCount: 6, continue: "" }]) {
      const e = thrown(() => runnersFromTable(200, NS, { ...t, metadata }));
      expect(e).toBeInstanceOf(UnacceptableAnswer);
      expect((e as Error).message).toMatch(/Table says 6 more items remain but carries no continue token/);
    }
    expect(thrown(() => runnersFromTable(200, NS, { ...t, metadata: { remainingItemCount: -1 } }))).toBeInstanceOf(UnacceptableAnswer);
    expect(runnersFromTable(200, NS, { ...t, metadata: { remainingItemCount: 6, continue: "next" } }).continueToken).toBe("next");
    expect(runnersFromTable(200, NS, { ...t, metadata: { remainingItemCount: 0 } }).continueToken).toBeUndefined();
  });

  it("bounds the phase and the message as the full reader does", () => {
    const t = table([served({ phase: "F".repeat(100), status: { message: "m".repeat(5000) } })]);
    const full = runnersFromList(200, NS, list([served({ phase: "F".repeat(100), status: { message: "m".repeat(5000) } })])).runners[0]!;
    const read = runnersFromTable(200, NS, t).runners[0]!;
    expect(read.phase).toBe(full.phase);
    expect(read.arcMessage).toBe(full.arcMessage);
    expect(read.arcMessage?.length).toBeLessThan(5000);
  });

  it.each([
    ["Message", /no Message column/],
    ["RunnerId", /no RunnerId column/],
    ["WorkflowRunId", /no WorkflowRunId column/],
    ["JobRepository", /no JobRepository column/],
    ["Status", /no Status or Phase column/],
  ])("refuses a Table without the %s column (an older CRD), naming it", (column, message) => {
    const e = thrown(() => runnersFromTable(200, NS, table([served()], "0.14.2", [column])));
    expect(e).toBeInstanceOf(TableRefused);
    expect((e as Error).message).toMatch(message);
  });

  it("refuses a column of another type, naming it and its type", () => {
    const t = table([served({ workflowRunId: 5 })]);
    const defs = (t["columnDefinitions"] as JsonObject[]).map((c) => (c["name"] === "WorkflowRunId" ? { ...c, type: "string" } : c));
    const e = thrown(() => runnersFromTable(200, NS, { ...t, columnDefinitions: defs }));
    expect(e).toBeInstanceOf(TableRefused);
    expect((e as Error).message).toBe('the Table\'s WorkflowRunId column is of type "string", not number or integer');
  });

  it("gives up Tables when the fallback clause answered the full list, carrying that page on", () => {
    const body = list([served()]);
    const e = thrown(() => runnersFromTable(200, NS, body));
    expect(e).toBeInstanceOf(TableRefused);
    expect((e as Error).message).toMatch(/the server answered the full list, not a Table/);
    expect((e as TableRefused).fullPage).toEqual({ status: 200, body });
    expect((thrown(() => runnersFromTable(200, NS, { kind: "Table", apiVersion: "meta.k8s.io/v1", rows: [] })) as Error).message).toMatch(
      /no columnDefinitions array/,
    );
  });

  it.each([
    [{}, /got no kind/],
    [[], /got no kind/],
    [{ kind: "Status" }, /got kind "Status"/],
    [{ kind: "Table", apiVersion: "meta.k8s.io/v1beta1", columnDefinitions: [], rows: [] }, /got kind "Table"/],
  ])("reads an answer that is neither a Table nor the list as unreadable this time, not as a server without Tables (%#)", (body, message) => {
    const e = thrown(() => runnersFromTable(200, NS, body));
    expect(e).toBeInstanceOf(UnacceptableAnswer);
    expect(e).not.toBeInstanceOf(TableRefused);
    expect((e as Error).message).toMatch(message);
  });

  it.each([
    [(r: JsonObject) => ({ ...r, object: undefined }), /^HTTP 200: Table\.rows\[1\]\.object: expected a PartialObjectMetadata/],
    [
      (r: JsonObject) => ({ ...r, object: { ...(r["object"] as JsonObject), kind: "EphemeralRunner" } }),
      /Table\.rows\[1\]\.object: expected a PartialObjectMetadata/,
    ],
    [(r: JsonObject) => ({ ...r, cells: "x" }), /Table\.rows\[1\]\.cells: expected an array/],
    [
      (r: JsonObject) => ({ ...r, object: { ...(r["object"] as JsonObject), metadata: { name: "x" } } }),
      /Table\.rows\[1\]\.metadata\.uid: expected a non-empty string/,
    ],
    [() => 3, /Table\.rows\[1\]: expected an object/],
  ])("fails the whole page on a row it cannot read, naming it (%#)", (spoil, message) => {
    const t = table([served(), served()]);
    const rows = t["rows"] as JsonObject[];
    const e = thrown(() => runnersFromTable(200, NS, { ...t, rows: [rows[0], spoil(rows[1]!)] }));
    expect(e).toBeInstanceOf(UnacceptableAnswer);
    expect((e as Error).message).toMatch(message);
  });

  it("reads the continue token of a page, and refuses one that is not a string", () => {
    const t = table([served()]);
    expect(runnersFromTable(200, NS, { ...t, metadata: { resourceVersion: "7", continue: "abc" } }).continueToken).toBe("abc");
    expect(thrown(() => runnersFromTable(200, NS, { ...t, metadata: { continue: 5 } }))).toBeInstanceOf(UnacceptableAnswer);
  });

  it("keeps status.runnerId and the job fields a later status patch wrote", () => {
    const r = served();
    const patched = {
      ...r,
      status: { ...(r["status"] as JsonObject), ...jobStartedStatus({ workflowRunId: 77, jobRepositoryName: "octo-org/x" }) },
    } as JsonObject;
    expect(runnersFromTable(200, NS, table([patched])).runners[0]).toMatchObject({ workflowRunId: 77, jobRepositoryName: "octo-org/x" });
  });
});
