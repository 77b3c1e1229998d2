// Bytes per runner of one list page (PAGE_SIZE runners) in each listing shape, with the stand-in's objects
// (pod template, managedFields): full objects, full objects as parsed (managedFields cut), a Table with
// includeObject=Metadata, and that Table as parsed. Run: node bench/list-shape-bytes.ts
import { PAGE_SIZE } from "../src/cluster/ephemeral-runner.ts";
import { withoutManagedFields } from "../src/cluster/without-managed-fields.ts";
import { makeEphemeralRunner } from "../test/standins/kube/control.ts";
import { managedFieldsOf } from "../test/standins/kube/managed-fields.ts";
import { printerColumns, tableOf } from "../test/standins/kube/table.ts";
import type { JsonObject } from "../test/standins/kube/types.ts";

const CREATED = "2026-12-01T10:00:00Z";

/** One listing shape and what a runner costs in it, on the wire and as parsed. */
export interface ListShape {
  shape: string;
  bytes: number;
}

/** Bytes per runner of one page of PAGE_SIZE stand-in objects (half busy, half idle) in each shape. */
export function measureListShapes(): ListShape[] {
  const items: JsonObject[] = Array.from({ length: PAGE_SIZE }, (_, i) => {
    const r = makeEphemeralRunner({
      namespace: "arc-runners",
      scaleSet: "arc-runners",
      ...(i % 2 ? { workflowRunId: 9_000_000 + i, jobRepositoryName: "octo-org/octo-repo" } : {}),
    });
    const meta = { ...(r.metadata as unknown as JsonObject), uid: crypto.randomUUID(), creationTimestamp: CREATED, resourceVersion: String(10_000 + i) };
    const obj = { ...(r as unknown as JsonObject), metadata: meta };
    return { ...obj, metadata: { ...meta, managedFields: managedFieldsOf(obj, CREATED) } };
  });
  const full = JSON.stringify({ kind: "EphemeralRunnerList", apiVersion: "actions.github.com/v1alpha1", metadata: { resourceVersion: "1" }, items });
  const table = JSON.stringify(tableOf(items, { resourceVersion: "1" }, printerColumns("0.14.2"), new URLSearchParams()));
  const per = (text: string): number => Math.round(Buffer.byteLength(text) / PAGE_SIZE);
  return [
    { shape: "full objects (what direct mode lists after a refusal, and the agent)", bytes: per(full) },
    { shape: "full objects, managedFields cut (what is parsed)", bytes: per(withoutManagedFields(full)) },
    { shape: "Table + metadata (what direct mode lists)", bytes: per(table) },
    { shape: "Table + metadata, managedFields cut (what is parsed)", bytes: per(withoutManagedFields(table)) },
  ];
}

if (import.meta.main) {
  for (const { shape, bytes } of measureListShapes()) console.log(`${shape.padEnd(72)} ${String(bytes).padStart(6)} bytes/runner`);
}
