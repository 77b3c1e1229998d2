// Agent mode: runners kept because the agent could not be reached wait for no
// time of their own (an error is not a due time). When an agent's view becomes
// whole again they are made due at once, so the alarm judges them within
// moments of the reconnect instead of at the next cron.
import type { Sql } from "./sql.ts";

/** The reasons agent-mode errors leave on a kept runner (judge row 2, and a failed order). */
const AGENT_ERROR_REASONS = ["cannot judge: CLUSTER_MODE=agent:%", "delete failed, retried later: %agent%"];

/** Makes every open runner kept for an agent error, and due at no time, due now; answers how many. */
export function wakeAgentErrors(sql: Sql, now: number): number {
  const like = AGENT_ERROR_REASONS.map(() => "reason LIKE ?").join(" OR ");
  return sql.run(`UPDATE runners SET due_at = ? WHERE state IN ('running', 'finished') AND due_at IS NULL AND (${like})`, now, ...AGENT_ERROR_REASONS);
}
