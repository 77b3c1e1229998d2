// The App's own installation events, which every GitHub App receives without
// subscribing: an uninstalled or suspended installation's tokens are refused,
// and a repository removed from it is no longer covered by it.
import * as v from "valibot";
import { isId, isObj, must, type Obj } from "./payload-fields.ts";

export type InstallationChange =
  | { kind: "revoked"; id: number; why: "deleted" | "suspend" }
  | { kind: "restored"; id: number }
  | { kind: "repositories-removed"; id: number; repos: string[] };

const InstallationId = must("installation.id", "a positive integer", isId);
const RemovedRepos = v.pipe(
  v.array(v.unknown(), "repositories_removed must be an array"),
  v.check((rs) => rs.every((r) => isObj(r) && typeof r.full_name === "string"), "every repositories_removed entry needs a full_name"),
  v.transform((rs) => rs.map((r) => (r as { full_name: string }).full_name)),
);

/** The change an `installation` or `installation_repositories` delivery says, an error naming the bad field, or undefined (nothing to do). */
export function installationChange(event: string, payload: Obj): InstallationChange | { error: string } | undefined {
  if (event !== "installation" && event !== "installation_repositories") return undefined;
  const action = payload.action;
  const acts = event === "installation" ? action === "deleted" || action === "suspend" || action === "unsuspend" : action === "removed";
  if (!acts) return undefined;
  const id = v.safeParse(InstallationId, isObj(payload.installation) ? payload.installation.id : undefined);
  if (!id.success) return { error: `${event}.${String(action)}: ${id.issues[0].message}` };
  if (action === "deleted" || action === "suspend") return { kind: "revoked", id: id.output, why: action };
  if (action === "unsuspend") return { kind: "restored", id: id.output };
  const repos = v.safeParse(RemovedRepos, payload.repositories_removed, { abortEarly: true });
  if (!repos.success) return { error: `${event}.removed: ${repos.issues[0].message}` };
  return { kind: "repositories-removed", id: id.output, repos: repos.output };
}
