// Direct mode's listing of one namespace as Tables (runner-table.ts), and the
// runners it then reads in full: those whose decision or count needs what a
// Table lacks (status.reason and status.failures for a Failed runner's judge,
// the runner version for the count of runners that never work). Few are read by
// GET each; beyond FULL_READS_MAX the namespace is listed in full once instead
// (one consistent answer, exactly what a full listing gives).
import type { ClusterRunner } from "../model/runner.ts";
import { OUTDATED_PHASE, isFailed } from "./arc-failure.ts";
import { PAGE_SIZE } from "./ephemeral-runner.ts";
import type { ReadAnswer } from "./read-runner.ts";
import { toClusterRunner } from "./runner-answers.ts";
import { UnacceptableAnswer } from "./http-answer.ts";
import { runnersFromTable, TableRefused, type TablePage } from "./runner-table.ts";

/** Beyond this many runners to read in full in one namespace, one full listing costs less than a GET each. */
export const FULL_READS_MAX = PAGE_SIZE / 10;
/** GETs in flight at once. */
const READS_AT_ONCE = 5;
/**
 * A runner this much younger than REAPER_IDLE_ALERT_SECONDS is read in full too: the sweep counts idle runners
 * at its own time, a little after the listing, and one that crossed the line in between must carry its version.
 */
const IDLE_MARGIN_MS = 600_000;

/**
 * Whether the sweep reads more of `r` than a Table carries: a Failed or Outdated runner, or one that may count
 * as idle (no run, not being deleted, created about REAPER_IDLE_ALERT_SECONDS ago or earlier; whyIdle in
 * src/reaper/idle-runners.ts). Open rows naming it are not known here: it is read whatever they say.
 */
export function needsFullRead(r: ClusterRunner, now: number, idleAlertSeconds: number): boolean {
  if (isFailed(r) || r.phase === OUTDATED_PHASE) return true;
  if (r.workflowRunId !== undefined || r.deletionTimestamp) return false;
  const created = r.createdAt ? Date.parse(r.createdAt) : Number.NaN;
  return Number.isFinite(created) && now - created >= idleAlertSeconds * 1000 - IDLE_MARGIN_MS;
}

export interface TableListing {
  /** One Table page (the answer's status and parsed body); throws as a full page's request does. */
  page(continueToken: string | undefined): Promise<{ status: number; body: unknown }>;
  /** The namespace listed as full objects. */
  listFull(): Promise<ClusterRunner[]>;
  /** One runner by name, in full. */
  read(name: string): Promise<ReadAnswer>;
  namespace: string;
  idleAlertSeconds: number;
  now: number;
}

/** Every runner of the namespace: TableRefused when the server serves no usable Table, ReadFailed when a GET failed. */
export async function listAsTable(l: TableListing): Promise<ClusterRunner[]> {
  const runners: ClusterRunner[] = [];
  let continueToken: string | undefined;
  do {
    const page = await l.page(continueToken);
    let read: TablePage;
    try {
      read = runnersFromTable(page.status, l.namespace, page.body);
    } catch (e) {
      // Tables given up only on the first page: past it, another shape is a broken answer, not a server without Tables.
      if (e instanceof TableRefused && continueToken !== undefined)
        throw new UnacceptableAnswer(page.status, `HTTP ${page.status}: a Table page was followed by another shape (${e.message})`, { cause: e });
      throw e;
    }
    runners.push(...read.runners);
    continueToken = read.continueToken;
  } while (continueToken);
  const wanted = runners.flatMap((r, i) => (needsFullRead(r, l.now, l.idleAlertSeconds) ? [i] : []));
  if (wanted.length === 0) return runners;
  if (wanted.length > FULL_READS_MAX) return l.listFull();
  const full = new Map<number, ClusterRunner | undefined>();
  for (let from = 0; from < wanted.length; from += READS_AT_ONCE) {
    await Promise.all(
      wanted.slice(from, from + READS_AT_ONCE).map(async (i) => {
        const name = runners[i]!.name;
        const answer = await l.read(name);
        if (answer.kind === "failed") throw new ReadFailed(name, answer.failure);
        // Gone since the Table: no runner. Another object of that name: the fresher read stands.
        full.set(i, answer.kind === "found" ? toClusterRunner(l.namespace, answer.runner) : undefined);
      }),
    );
  }
  return runners.flatMap((r, i) => {
    if (!full.has(i)) return [r];
    const read = full.get(i);
    return read ? [read] : [];
  });
}

/** A GET of a runner to read in full failed: the namespace is unreadable (every runner of it is kept). */
export class ReadFailed extends Error {
  override readonly name = "ReadFailed";
  readonly failure: Extract<ReadAnswer, { kind: "failed" }>["failure"];
  constructor(name: string, failure: Extract<ReadAnswer, { kind: "failed" }>["failure"]) {
    super(`reading ${name} in full after its Table row: ${failure.why}`, { cause: failure.cause });
    this.failure = failure;
  }
}
