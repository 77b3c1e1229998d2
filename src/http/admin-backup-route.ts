// GET /admin/backup and POST /admin/restore, behind the bearer ADMIN_TOKEN (never a session: a
// backup is for scripts). The backup is the ledger's NDJSON (src/ledger/backup-format.ts); a
// restore writes one into an empty ledger, this server's or, with ?ledger=NAME, one to be
// switched to (LEDGER_NAME=NAME), and answers what it wrote or why it wrote nothing.
import type { Context } from "hono";
import type { Settings } from "../config/settings.ts";
import { ledgerFor, withAdmin } from "../durable/ledger-for.ts";
import type { RestoreAnswer } from "../durable/ledger-admin.ts";
import type { AppEnv } from "./app-env.ts";

const LEDGER_NAME = /^[a-z0-9][-a-z0-9]{0,62}$/;

/** The HTTP status of each refusal: the backup's fault (400) or the ledger's state (409). */
const STATUS = { BadFormat: 400, BadChecksum: 400, RowCountMismatch: 400, UnknownTable: 400, UnknownColumn: 400, NewerSchema: 409, NotEmpty: 409 } as const;

export async function adminBackup(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const stream = await withAdmin(ledgerFor(c.env, settings.ledgerName), (admin) => admin.backup());
  const name = `arc-reaper-${settings.ledgerName}-${new Date().toISOString().replace(/[:.]/g, "-")}.ndjson`;
  return new Response(stream, {
    headers: { "content-type": "application/x-ndjson; charset=utf-8", "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store" },
  });
}

export async function adminRestore(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const target = c.req.query("ledger") ?? settings.ledgerName;
  if (!LEDGER_NAME.test(target))
    return c.json(
      { reason: "BadLedgerName", error: `ledger must be a LEDGER_NAME (1 to 63 lowercase letters, digits and dashes), got ${JSON.stringify(target)}` },
      400,
    );
  const body = c.req.raw.body;
  if (!body) return c.json({ reason: "BadFormat", error: "the request has no body: send the file GET /admin/backup answered" }, 400);
  const outcome = await withAdmin(
    ledgerFor(c.env, target),
    async (admin): Promise<RestoreAnswer> => (await admin.restore(body, target === settings.ledgerName)) as RestoreAnswer,
  );
  if (!outcome.ok) return c.json({ reason: outcome.reason, error: outcome.message, ledger: target }, STATUS[outcome.reason]);
  return c.json({
    ledger: target,
    live: target === settings.ledgerName,
    schemaVersion: outcome.schemaVersion,
    migratedTo: outcome.migratedTo,
    rows: outcome.rows,
  });
}
