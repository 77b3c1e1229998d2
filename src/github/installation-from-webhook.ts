// The App's own installation events, which every GitHub App receives without
// subscribing: an uninstalled or suspended installation's tokens are refused,
// and a repository removed from it is no longer covered by it.
export type InstallationChange =
  | { kind: "revoked"; id: number; why: "deleted" | "suspend" }
  | { kind: "restored"; id: number }
  | { kind: "repositories-removed"; id: number; repos: string[] };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v > 0;

/** The change an `installation` or `installation_repositories` delivery says, an error naming the bad field, or undefined (nothing to do). */
export function installationChange(event: string, payload: Obj): InstallationChange | { error: string } | undefined {
  if (event !== "installation" && event !== "installation_repositories") return undefined;
  const action = payload.action;
  const acts = event === "installation" ? action === "deleted" || action === "suspend" || action === "unsuspend" : action === "removed";
  if (!acts) return undefined;
  const id = isObj(payload.installation) ? payload.installation.id : undefined;
  if (!isId(id))
    return { error: `${event}.${String(action)}: installation.id must be a positive integer, got ${id === undefined ? "nothing" : JSON.stringify(id)}` };
  if (action === "deleted" || action === "suspend") return { kind: "revoked", id, why: action };
  if (action === "unsuspend") return { kind: "restored", id };
  const removed = payload.repositories_removed;
  if (!Array.isArray(removed)) return { error: `${event}.removed: repositories_removed must be an array` };
  const repos = removed.map((r) => (isObj(r) && typeof r.full_name === "string" ? r.full_name : undefined));
  if (repos.some((r) => r === undefined)) return { error: `${event}.removed: every repositories_removed entry needs a full_name` };
  return { kind: "repositories-removed", id, repos: repos as string[] };
}
