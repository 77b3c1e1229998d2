// The ledger's side of the FailedPort (src/reaper/ports.ts): stores Failed
// runners' rows, counts deletes and closes, logs a decision line on a change.
import type { FailedRunner } from "../model/failed.ts";
import type { DecisionLine } from "../reaper/log-lines.ts";
import type { FailedPort } from "../reaper/ports.ts";
import type { CountersTable } from "./counters-table.ts";
import { FailedTable } from "./failed-table.ts";
import type { Sql } from "./sql.ts";

export function failedPort(sql: Sql, counters: CountersTable, log: (line: DecisionLine) => void): FailedPort {
  const table = new FailedTable(sql);
  return {
    open: () => table.open(),
    deletedSince: (since) => table.deletedSince(since),
    store(row: FailedRunner, change) {
      table.put(row);
      if (change.deleted) {
        counters.add("arc_reaper_deletions_total", { cause: "failed" });
        counters.add("arc_reaper_cluster_deletions_total", { cluster: row.cluster });
      }
      if (change.logged || change.deleted || change.closed) {
        const line: DecisionLine = {
          msg: "decision",
          by: "sweep",
          runner: row.name,
          namespace: row.namespace,
          repository: null,
          run: row.runId ?? null,
          job: null,
          verdict: change.deleted ? "deleted" : change.closed ? "gone" : "keep",
          reason: row.reason,
        };
        if (row.code !== undefined) line.code = row.code;
        if (row.cluster !== "default") line.cluster = row.cluster;
        log(line);
      }
    },
  };
}
