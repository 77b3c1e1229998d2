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
for (const [shape, text] of [
  ["full objects", full],
  ["full, managedFields cut (parsed)", withoutManagedFields(full)],
  ["Table + metadata", table],
  ["Table + metadata, managedFields cut (parsed)", withoutManagedFields(table)],
] as const) {
  console.log(`${shape.padEnd(46)} ${String(per(text)).padStart(6)} bytes/runner`);
}
