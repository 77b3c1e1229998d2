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
import { toClusterRunner } from "./runner-answers.ts";
import { errorText } from "../model/error-text.ts";

/** What the Accept header asks for: a Table, or nothing (the server answers 406 when it has no Table for it). */
export const TABLE_ACCEPT = "application/json;as=Table;g=meta.k8s.io;v=v1";

/** A Table the reader cannot use as a whole (not a Table, or a column it needs missing or of another type): list full objects instead. */
export class TableRefused extends Error {
  override readonly name = "TableRefused";
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
function objectOfRow(row: unknown, at: ReadonlyMap<Field, number>, where: string): Record<string, unknown> {
  if (!isObj(row)) throw new Error(`${where}: expected an object`);
  const cells = row["cells"];
  if (!Array.isArray(cells)) throw new Error(`${where}.cells: expected an array`);
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
 * One Table page of `namespace`. TableRefused when the answer is no Table or lacks a column (the caller lists full
 * objects); UnacceptableAnswer when it is a Table with a row that cannot be read (the namespace is then unreadable,
 * as a full list with such an item is: every runner of it is kept).
 */
export function runnersFromTable(status: number, namespace: string, page: unknown): TablePage {
  if (!isObj(page) || page["kind"] !== "Table" || page["apiVersion"] !== "meta.k8s.io/v1") {
    const kind = isObj(page) && typeof page["kind"] === "string" ? `kind ${JSON.stringify(page["kind"].slice(0, 60))}` : "no kind";
    throw new TableRefused(`HTTP ${status}: expected a meta.k8s.io/v1 Table, got ${kind}`);
  }
  const at = columnIndexes(page["columnDefinitions"]);
  const rows = page["rows"];
  if (!Array.isArray(rows)) throw new UnacceptableAnswer(status, `HTTP ${status}: Table.rows: expected an array`);
  const runners = rows.map((row, i) => {
    const where = `Table.rows[${i}]`;
    try {
      return toClusterRunner(namespace, readEphemeralRunner(objectOfRow(row, at, where), where));
    } catch (e) {
      throw new UnacceptableAnswer(status, `HTTP ${status}: ${errorText(e)}`, { cause: e });
    }
  });
  const metadata = isObj(page["metadata"]) ? page["metadata"] : {};
  const token = metadata["continue"];
  if (token !== undefined && typeof token !== "string") throw new UnacceptableAnswer(status, `HTTP ${status}: Table.metadata.continue: expected a string`);
  return { runners, continueToken: token || undefined };
}
