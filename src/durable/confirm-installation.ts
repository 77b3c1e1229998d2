// An `installation` deleted or suspended delivery, or an `installation_repositories`
// removed one, is only a claim: its signature covers the body, not the GUID, so a
// captured delivery can be replayed with a new GUID. Before an installation is
// forgotten, GitHub is asked (App JWT) what is true now; what it says is applied,
// whatever the delivery claimed. When GitHub cannot be asked, nothing is forgotten:
// a token mint that answers 404 later drops the installation anyway.
import type { InstallationChange } from "../github/installation-from-webhook.ts";
import type { Github } from "../github/github-client.ts";
import type { MemoryTable } from "../ledger/memory-table.ts";
import { errorText } from "../model/error-text.ts";

/** An uninstalled installation's id never comes back; a suspended one is tried again after an hour. */
const SUSPENDED_RETRY_MS = 3_600_000;
/** Replays of one claim about an installation within this long after GitHub was asked about it ask nothing. */
const CONFIRM_EVERY_MS = 60_000;
/**
 * At most this many repositories of one claim are asked about: a captured delivery naming many, replayed
 * with fresh GUIDs every minute, costs this many calls a minute, never the whole budget. The rest stay
 * as they are (a read refused for them drops them later).
 */
export const CONFIRM_REPOS_AT_MOST = 10;

type Confirmation = { kind: "applied"; change: InstallationChange; forgot: string[] } | { kind: "kept"; why: string };

const checkedKey = (change: { kind: string; id: number }) => `github-checked/installation/${change.id}/${change.kind}` as const;

/** Asks GitHub about the change a delivery claims and applies what it confirms. Never throws. */
export async function confirmInstallationChange(
  github: Github | Error,
  memory: MemoryTable,
  change: Exclude<InstallationChange, { kind: "restored" }>,
  now: number,
  historyDays: number,
): Promise<Confirmation> {
  if (github instanceof Error) return { kind: "kept", why: `GitHub cannot be asked: ${github.message}` };
  if (change.kind === "revoked" && (memory.get(`installation-revoked/${change.id}`) ?? 0) > now)
    return { kind: "kept", why: `installation ${change.id} is already forgotten` };
  const lastChecked = memory.get(checkedKey(change)) ?? 0;
  if (now - lastChecked < CONFIRM_EVERY_MS)
    return { kind: "kept", why: `GitHub was asked about installation ${change.id} less than ${CONFIRM_EVERY_MS / 1000}s ago` };
  // Recorded before asking: a claim whose asking fails midway (the budget spent, an error) is not asked again within the minute.
  memory.set(checkedKey(change), now);
  try {
    if (change.kind === "revoked") {
      const state = await github.installationState(change.id);
      if (state === "live")
        return { kind: "kept", why: `GitHub says installation ${change.id} is live (not ${change.why === "deleted" ? "deleted" : "suspended"})` };
      // GitHub's word, not the delivery's: a "suspend" for an installation GitHub no longer has is a deletion.
      memory.revokeInstallation(change.id, now + (state === "deleted" ? historyDays * 86_400_000 : SUSPENDED_RETRY_MS));
      return { kind: "applied", change: { ...change, why: state === "deleted" ? "deleted" : "suspend" }, forgot: [`installation ${change.id} (${state})`] };
    }
    const forgot: string[] = [];
    // Only repositories remembered with this installation need a word from GitHub, and at most a few of them.
    const remembered = change.repos.filter((r) => memory.get(`installation/${r}`) === change.id);
    const unasked = remembered.length - CONFIRM_REPOS_AT_MOST;
    for (const repo of remembered.slice(0, CONFIRM_REPOS_AT_MOST)) {
      const covering = await github.repositoryInstallation(repo);
      if (covering === change.id) continue;
      memory.delete(`installation/${repo}`);
      if (covering !== undefined) memory.installationNamed(repo, covering);
      forgot.push(repo);
    }
    const rest = unasked > 0 ? `; ${unasked} more not asked (at most ${CONFIRM_REPOS_AT_MOST} a claim)` : "";
    return forgot.length > 0
      ? { kind: "applied", change: { ...change, repos: forgot }, forgot }
      : { kind: "kept", why: `GitHub says installation ${change.id} still covers ${change.repos.join(", ") || "those repositories"}${rest}` };
  } catch (e) {
    return { kind: "kept", why: `GitHub could not confirm it: ${errorText(e)}` };
  }
}
