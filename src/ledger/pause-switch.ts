// The pause switch: while the ledger's memory holds "paused", every decision is
// still made and logged, but a condemned runner is kept (held for "paused",
// src/reaper/reconcile.ts) with no due time. Resuming makes those runners due
// now, so the alarm reaps them at once instead of waiting for the next sweep.
import { MemoryTable, type PausedBy, type PauseState } from "./memory-table.ts";
import type { Sql } from "./sql.ts";

/** Pauses (a second pause keeps the first one's time); answers the state now in force. */
export function pause(sql: Sql, by: PausedBy, now: number): PauseState {
  const memory = new MemoryTable(sql);
  const current = memory.get("paused");
  if (current) return current;
  const state: PauseState = { since: new Date(now).toISOString(), by };
  memory.set("paused", state);
  return state;
}

/** Resumes; answers whether it was paused. The ledger then releases the rows held for "paused". */
export function resume(sql: Sql): { wasPaused: boolean } {
  const memory = new MemoryTable(sql);
  const wasPaused = memory.get("paused") !== undefined;
  memory.delete("paused");
  return { wasPaused };
}
