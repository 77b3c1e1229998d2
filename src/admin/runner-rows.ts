// What the admin listing, the page and /metrics show of a runner: its row in the
// ledger (src/ledger/queries.ts), and the `?state=` filter they share.
import { RUNNER_STATES, type RunnerState } from "../model/runner.ts";

export { RUNNER_STATES, type RunnerState };
export type { RunnerRow } from "../ledger/queries.ts";

function isRunnerState(value: string): value is RunnerState {
  return (RUNNER_STATES as readonly string[]).includes(value);
}

/** The `?state=` filter: absent, a known state, or an error that names the allowed ones. */
export function stateFilter(wanted: string | undefined): { state?: RunnerState; error?: string } {
  if (wanted === undefined) return {};
  if (isRunnerState(wanted)) return { state: wanted };
  return { error: `state must be one of ${RUNNER_STATES.join(", ")}, got ${JSON.stringify(wanted)}` };
}
