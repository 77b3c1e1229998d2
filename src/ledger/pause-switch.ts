// The pause switch: while the ledger's memory holds "paused", every decision is
// still made and logged, but a condemned runner is kept ("paused: would delete:
// …", judge-and-act.ts) with no due time. Resuming makes those runners due now,
// so the alarm reaps them at once instead of waiting for the next sweep.
import { MemoryTable } from "./memory-table.ts";
import type { Sql } from "./sql.ts";

export type PausedBy = "bearer" | "session";
export interface PauseState {
  since: string;
  by: PausedBy;
}

export const PAUSED_KEY = "paused";

/** Pauses (a second pause keeps the first one's time); answers the state now in force. */
export function pause(sql: Sql, by: PausedBy, now: number): PauseState {
  const memory = new MemoryTable(sql);
  const current = memory.get<PauseState>(PAUSED_KEY);
  if (current) return current;
  const state: PauseState = { since: new Date(now).toISOString(), by };
  memory.set(PAUSED_KEY, state);
  return state;
}

/** Resumes; answers whether it was paused and how many kept runners were made due now. */
export function resume(sql: Sql, now: number): { wasPaused: boolean; madeDue: number } {
  const memory = new MemoryTable(sql);
  const wasPaused = memory.get<PauseState>(PAUSED_KEY) !== undefined;
  memory.delete(PAUSED_KEY);
  // Only the runners the pause kept: other keeps wait for the sweep as before.
  const kept = "state IN ('running', 'finished') AND due_at IS NULL AND reason LIKE 'paused: would delete: %'";
  const madeDue = Number(sql.first<{ n: number }>(`SELECT COUNT(*) AS n FROM runners WHERE ${kept}`)?.n ?? 0);
  if (madeDue > 0) sql.run(`UPDATE runners SET due_at = ? WHERE ${kept}`, now);
  return { wasPaused, madeDue };
}
