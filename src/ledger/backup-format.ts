// A ledger backup as NDJSON: a first line naming the format, the schema version, each table's
// columns and row count, the body's size and its SHA-256; then one line per row,
// `["table",[values in the columns' order]]`. Pure: what the ledger read goes in, lines come
// out; a text comes in, a backup or a refusal with a reason code comes out.
import * as v from "valibot";

const BACKUP_FORMAT = "arc-reaper-ledger-backup/1";

export type BackupValue = string | number | null;

export interface BackupTable {
  name: string;
  columns: string[];
  rows: BackupValue[][];
}

/** What the ledger read in one synchronous step: its schema version and the tables backed up. */
export interface BackupContent {
  schemaVersion: number;
  tables: BackupTable[];
}

const IDENTIFIER = v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_]*$/));

const HeaderSchema = v.object({
  format: v.literal(BACKUP_FORMAT),
  schemaVersion: v.pipe(v.number(), v.integer(), v.minValue(1)),
  takenAt: v.string(),
  tables: v.record(IDENTIFIER, v.object({ columns: v.array(IDENTIFIER), rows: v.pipe(v.number(), v.integer(), v.minValue(0)) })),
  bytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  leftOut: v.record(v.string(), v.string()),
});

export type BackupHeader = v.InferOutput<typeof HeaderSchema>;

const LineSchema = v.tuple([IDENTIFIER, v.array(v.union([v.string(), v.number(), v.null()]))]);

export type BackupRefusalReason = "BadFormat" | "BadChecksum" | "RowCountMismatch";

export type DecodedBackup = { ok: true; header: BackupHeader; tables: BackupTable[] } | { ok: false; reason: BackupRefusalReason; message: string };

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The backup's bytes: its first line, then the rows. */
export async function encodeBackup(content: BackupContent, takenAt: Date, leftOut: Readonly<Record<string, string>>): Promise<Uint8Array[]> {
  const lines: string[] = [];
  for (const table of content.tables) for (const row of table.rows) lines.push(JSON.stringify([table.name, row]));
  const body = new TextEncoder().encode(lines.length === 0 ? "" : `${lines.join("\n")}\n`);
  const header: BackupHeader = {
    format: BACKUP_FORMAT,
    schemaVersion: content.schemaVersion,
    takenAt: takenAt.toISOString(),
    tables: Object.fromEntries(content.tables.map((t) => [t.name, { columns: t.columns, rows: t.rows.length }])),
    bytes: body.byteLength,
    sha256: await sha256Hex(body),
    leftOut: { ...leftOut },
  };
  return [new TextEncoder().encode(`${JSON.stringify(header)}\n`), body];
}

const refuse = (reason: BackupRefusalReason, message: string): DecodedBackup => ({ ok: false, reason, message });

/** A backup's text checked whole: its first line, its body's size and SHA-256, every row's table and width, each table's count. */
export async function decodeBackup(text: string): Promise<DecodedBackup> {
  const newline = text.indexOf("\n");
  if (newline < 0) return refuse("BadFormat", "the backup has no first line: expected NDJSON from GET /admin/backup");
  let headerJson: unknown;
  try {
    headerJson = JSON.parse(text.slice(0, newline));
  } catch (e) {
    return refuse("BadFormat", `the backup's first line is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const parsedHeader = v.safeParse(HeaderSchema, headerJson);
  if (!parsedHeader.success) {
    const issue = parsedHeader.issues[0];
    return refuse("BadFormat", `the backup's first line is not an ${BACKUP_FORMAT} header: ${v.getDotPath(issue) ?? "(root)"}: ${issue.message}`);
  }
  const header = parsedHeader.output;
  const body = new TextEncoder().encode(text.slice(newline + 1));
  if (body.byteLength !== header.bytes) {
    return refuse("BadChecksum", `the backup's body is ${body.byteLength} bytes, its first line says ${header.bytes}: cut short or altered`);
  }
  const sha256 = await sha256Hex(body);
  if (sha256 !== header.sha256) return refuse("BadChecksum", `the backup's body has SHA-256 ${sha256}, its first line says ${header.sha256}: altered`);
  const tables = new Map<string, BackupTable>(Object.entries(header.tables).map(([name, t]) => [name, { name, columns: t.columns, rows: [] }]));
  const lines = text.slice(newline + 1).split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return refuse("BadFormat", `line ${i + 2} of the backup is not JSON`);
    }
    const parsed = v.safeParse(LineSchema, json);
    if (!parsed.success) return refuse("BadFormat", `line ${i + 2} of the backup is not ["table",[values]]`);
    const [name, values] = parsed.output;
    const table = tables.get(name);
    if (!table) return refuse("BadFormat", `line ${i + 2} of the backup is a row of table ${name}, which its first line does not name`);
    if (values.length !== table.columns.length) {
      return refuse("BadFormat", `line ${i + 2} of the backup has ${values.length} values for table ${name}'s ${table.columns.length} columns`);
    }
    table.rows.push(values);
  }
  for (const table of tables.values()) {
    const said = header.tables[table.name]!.rows;
    if (table.rows.length !== said)
      return refuse("RowCountMismatch", `table ${table.name} has ${table.rows.length} rows in the backup, its first line says ${said}`);
  }
  return { ok: true, header, tables: [...tables.values()] };
}
