// A list page of EphemeralRunners as a meta.k8s.io/v1 Table (Accept
// `as=Table`, includeObject=Metadata): per row the cells of ARC's printer
// columns and the object's metadata (a PartialObjectMetadata). Cells are found
// by the column definitions' names and types, never by position alone, and put
// back where the object keeps them (`status.<field>`), so that the one reader of
// an EphemeralRunner (ephemeral-runner.ts) validates them exactly as it does a
// full object's. What a Table cannot carry (status.reason, status.failures, the
// pod template's runner version) is absent: list-as-table.ts reads the runners
// that need it in full.
import type { ClusterRunner } from "../model/runner.ts";
import { isPlainObject as isObj } from "../model/shapes.ts";
import { readEphemeralRunner } from "./ephemeral-runner.ts";
import { UnacceptableAnswer } from "./http-answer.ts";
import { checkPageEnd } from "./page-end.ts";
import { toClusterRunner } from "./runner-answers.ts";
import { errorText } from "../model/error-text.ts";

/**
 * What the Accept header asks for: a Table, else the list as JSON (the fallback clause the API docs advise: a
 * server without Tables answers the full list at once, instead of a 406 and a second request).
 */
export const TABLE_ACCEPT = "application/json;as=Table;g=meta.k8s.io;v=v1, application/json";

/**
 * The server serves no usable Table (a 406, the full list instead, or a column it needs missing or of another
 * type): list full objects instead. `fullPage`: the full list page it answered instead, to carry on from.
 */
export class TableRefused extends Error {
  override readonly name = "TableRefused";
  readonly fullPage: { status: number; body: unknown } | undefined;
  constructor(message: string, fullPage?: { status: number; body: unknown }) {
    super(message);
    this.fullPage = fullPage;
  }
}

/** Whether a non-null cell is of its column's type (Kubernetes' printer column types); a type not listed is not checked. */
function cellFits(cell: unknown, type: unknown): boolean {
  switch (type) {
    case "integer":
      return Number.isSafeInteger(cell);
    case "number":
      return typeof cell === "number" && Number.isFinite(cell);
    case "string":
    case "date":
      return typeof cell === "string";
    case "boolean":
      return typeof cell === "boolean";
    default:
      return true;
  }
}

/** The printer columns read, by the status field each stands for: its names across ARC's CRDs and the types a cell of it may have. */
const COLUMNS = [
  { field: "runnerId", names: ["RunnerId"], types: ["number", "integer"] },
  // ARC up to 0.14 calls it Status, master and 0.15 Phase (test/fixtures/arc).
  { field: "phase", names: ["Status", "Phase"], types: ["string"] },
  { field: "jobRepositoryName", names: ["JobRepository"], types: ["string"] },
  { field: "workflowRunId", names: ["WorkflowRunId"], types: ["number", "integer"] },
  { field: "message", names: ["Message"], types: ["string"] },
] as const;

type Field = (typeof COLUMNS)[number]["field"];

/** Where each needed column sits in a row's cells; TableRefused naming the first missing or mistyped one. */
function columnIndexes(definitions: unknown): Map<Field, number> {
  if (!Array.isArray(definitions)) throw new TableRefused("the Table has no columnDefinitions array");
  const at = new Map<Field, number>();
  for (const c of COLUMNS) {
    const i = definitions.findIndex((d) => isObj(d) && (c.names as readonly string[]).includes(d["name"] as string));
    if (i < 0) throw new TableRefused(`the Table has no ${c.names.join(" or ")} column (an older CRD?)`);
    const type = (definitions[i] as Record<string, unknown>)["type"];
    if (!(c.types as readonly unknown[]).includes(type)) {
      throw new TableRefused(
        `the Table's ${String((definitions[i] as Record<string, unknown>)["name"])} column is of type ${JSON.stringify(type)}, not ${c.types.join(" or ")}`,
      );
    }
    at.set(c.field, i);
  }
  return at;
}

/**
 * The object a row stands for, as far as the Table tells: its metadata and the status fields of its cells.
 * A null cell (the column's jsonPath found nothing) is no field; any other value is put as it came, for the
 * reader to take or fall back on as it does a full object's (a string runnerId reads as no id).
 */
function objectOfRow(row: unknown, at: ReadonlyMap<Field, number>, columns: readonly Record<string, unknown>[], where: string): Record<string, unknown> {
  if (!isObj(row)) throw new Error(`${where}: expected an object`);
  const cells = row["cells"];
  if (!Array.isArray(cells)) throw new Error(`${where}.cells: expected an array`);
  // The API server sends one cell per column, typed or null: anything else is not its answer (a partial row must
  // never read as a runner with no run and no id, which the sweep would close as gone while it works).
  if (cells.length !== columns.length) throw new Error(`${where}.cells: ${cells.length} cells for ${columns.length} columns`);
  for (const [i, cell] of cells.entries()) {
    if (cell !== null && !cellFits(cell, columns[i]!["type"]))
      throw new Error(`${where}.cells[${i}] (${String(columns[i]!["name"])}): ${typeof cell}, not its column's ${String(columns[i]!["type"])}`);
  }
  const object = row["object"];
  if (!isObj(object) || object["kind"] !== "PartialObjectMetadata") {
    throw new Error(`${where}.object: expected a PartialObjectMetadata (includeObject=Metadata)`);
  }
  const status: Record<string, unknown> = {};
  for (const [field, i] of at) {
    const cell = cells[i];
    if (cell !== null && cell !== undefined) status[field] = cell;
  }
  return { metadata: object["metadata"], status };
}

export interface TablePage {
  runners: ClusterRunner[];
  continueToken: string | undefined;
}

/**
 * One Table page of `namespace`. TableRefused when the server answered the full list instead or its Table lacks a
 * column (the caller lists full objects); UnacceptableAnswer when the answer is neither, or a Table with a row that
 * cannot be read (a cell count other than its columns', a cell of another type) or a page cut short (the namespace
 * is then unreadable, as a full list with such an item is: every runner of it is kept).
 */
export function runnersFromTable(status: number, namespace: string, page: unknown): TablePage {
  // The fallback clause answered: no Tables here, and this page is the first of the full list.
  if (isObj(page) && page["kind"] === "EphemeralRunnerList")
    throw new TableRefused(`HTTP ${status}: the server answered the full list, not a Table`, { status, body: page });
  if (!isObj(page) || page["kind"] !== "Table" || page["apiVersion"] !== "meta.k8s.io/v1") {
    // Neither a Table nor the list (a proxy's `{}`, HTML): unreadable this time, not a reason to give up Tables for a day.
    const kind = isObj(page) && typeof page["kind"] === "string" ? `kind ${JSON.stringify(page["kind"].slice(0, 60))}` : "no kind";
    throw new UnacceptableAnswer(status, `HTTP ${status}: expected a meta.k8s.io/v1 Table or an EphemeralRunnerList, got ${kind}`);
  }
  const at = columnIndexes(page["columnDefinitions"]);
  const columns = (page["columnDefinitions"] as unknown[]).map((d) => (isObj(d) ? d : {}));
  const rows = page["rows"];
  if (!Array.isArray(rows)) throw new UnacceptableAnswer(status, `HTTP ${status}: Table.rows: expected an array`);
  const runners = rows.map((row, i) => {
    const where = `Table.rows[${i}]`;
    try {
      return toClusterRunner(namespace, readEphemeralRunner(objectOfRow(row, at, columns, where), where));
    } catch (e) {
      throw new UnacceptableAnswer(status, `HTTP ${status}: ${errorText(e)}`, { cause: e });
    }
  });
  const metadata = isObj(page["metadata"]) ? page["metadata"] : {};
  const token = metadata["continue"];
  if (token !== undefined && typeof token !== "string") throw new UnacceptableAnswer(status, `HTTP ${status}: Table.metadata.continue: expected a string`);
  checkPageEnd(status, metadata, "Table");
  return { runners, continueToken: token || undefined };
}
