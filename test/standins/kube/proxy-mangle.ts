// What a broken proxy between the reaper and the API server can make of a real
// list answer (issue 46): a Table row cut short, number cells sent as text, a
// page cut with `remainingItemCount` saying more is coming and no `continue`.
// None of these is what the API server says; the reaper must read each as an
// unreadable namespace, never as runners that are absent or idle.
// Fleets inside workerd import MANGLES: nothing of Node here.
import type { Json, JsonObject } from "./types.ts";

export const MANGLES = ["short-row", "mistyped-cells", "cut-page"] as const;
/**
 * - short-row: the first row of a Table keeps 2 cells, whatever its columns
 * - mistyped-cells: every number a Table's number or integer column holds is sent as a string
 * - cut-page: a Table's or list's second half is dropped, `continue` with it; `remainingItemCount` counts what was dropped
 */
export type Mangle = (typeof MANGLES)[number];

/** `body` as the proxy sends it; undefined when it has nothing the mangle could change (the real answer goes out). */
export function mangled(body: JsonObject, how: Mangle): JsonObject | undefined {
  const out = structuredClone(body);
  const rows = out["kind"] === "Table" && Array.isArray(out["rows"]) ? (out["rows"] as JsonObject[]) : undefined;
  switch (how) {
    case "short-row": {
      const first = rows?.[0];
      if (!first || !Array.isArray(first["cells"]) || first["cells"].length <= 2) return undefined;
      first["cells"] = first["cells"].slice(0, 2);
      return out;
    }
    case "mistyped-cells": {
      const columns = Array.isArray(out["columnDefinitions"]) ? (out["columnDefinitions"] as JsonObject[]) : [];
      const numeric = columns.flatMap((c, i) => (c["type"] === "number" || c["type"] === "integer" ? [i] : []));
      let changed = false;
      for (const row of rows ?? []) {
        const cells = row["cells"];
        if (!Array.isArray(cells)) continue;
        for (const i of numeric) {
          if (typeof cells[i] === "number") {
            cells[i] = String(cells[i]);
            changed = true;
          }
        }
      }
      return changed ? out : undefined;
    }
    case "cut-page": {
      const key = rows ? "rows" : "items";
      const list = out[key];
      if (!Array.isArray(list) || list.length < 2) return undefined;
      const kept = Math.ceil(list.length / 2);
      const m = out["metadata"];
      const metadata: JsonObject = typeof m === "object" && m !== null && !Array.isArray(m) ? m : {};
      const before = typeof metadata["remainingItemCount"] === "number" ? metadata["remainingItemCount"] : 0;
      delete metadata["continue"];
      metadata["remainingItemCount"] = before + list.length - kept;
      out["metadata"] = metadata;
      out[key] = list.slice(0, kept) as Json[];
      return out;
    }
  }
}
