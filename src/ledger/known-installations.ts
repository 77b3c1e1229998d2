// The installations the ledger knows: those remembered for repositories
// (memory keys `installation/<owner>/<repo>`) and those open runners' facts name.
import type { KnownInstallation } from "../health/deep-health.ts";
import type { Sql } from "./sql.ts";

export function knownInstallations(sql: Sql): KnownInstallation[] {
  const byId = new Map<number, string[]>();
  for (const row of sql.all<{ key: string; value: string }>("SELECT key, value FROM memory WHERE key >= 'installation/' AND key < 'installation0'")) {
    const id = Number(JSON.parse(row.value));
    if (!Number.isSafeInteger(id)) continue;
    const repos = byId.get(id) ?? [];
    repos.push(row.key.slice("installation/".length));
    byId.set(id, repos);
  }
  for (const row of sql.all<{ id: number }>(
    "SELECT DISTINCT installation_id AS id FROM runners WHERE state IN ('running', 'finished') AND installation_id IS NOT NULL",
  )) {
    if (!byId.has(row.id)) byId.set(row.id, []);
  }
  return [...byId.entries()].sort(([a], [b]) => a - b).map(([id, repos]) => ({ id, repos: repos.sort() }));
}
