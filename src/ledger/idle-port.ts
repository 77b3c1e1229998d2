// The ledger's side of the sweep's count of runners that never work: one memory
// row, written only when the count changes (a steady fleet writes nothing).
import type { IdleCount } from "../model/idle.ts";
import type { MemoryTable } from "./memory-table.ts";

const same = (a: IdleCount, b: IdleCount): boolean => a.idleAlertSeconds === b.idleAlertSeconds && JSON.stringify(a.groups) === JSON.stringify(b.groups);

export function idlePort(memory: MemoryTable): { store(count: IdleCount): void } {
  return {
    store(count) {
      const old = memory.get("idle-runners");
      if (old === undefined || !same(old, count)) memory.set("idle-runners", count);
    },
  };
}
