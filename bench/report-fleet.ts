// Table 6's agent heap, agent-mode snapshot and alarm batch, as BENCHMARKS.md prose around their tables (issue 25).
import type { AgentMemory } from "./agent-memory.ts";
import type { AlarmBatch } from "./alarm-batch.ts";
import type { SnapshotApply } from "./snapshot-apply.ts";
import { alarmBatchTable, snapshotApplyTable } from "./tables.ts";
import { int } from "./markdown.ts";

/** Table 6, continued: the agent's snapshot applied by the ledger (issue 25). */
export function snapshotApplySection(r: SnapshotApply, load: string): string {
  return `
**The agent's snapshot applied** (bench/snapshot-apply.ts): agent mode under \`wrangler dev\`, this process dialling
\`GET /agent\` with the agent's token and sending the agent's own messages for ${int(r.runners)} runners in 12 namespaces, first
one part at a time (each part's workerd CPU read once workerd is idle again), then all back to back as after a reconnect
(the view replaced whole); the ledger's view must hold every runner after each. Then sweeps over that view, whose
runners are all busy and unseen (no row yet), until every runner had its first look (a sweep gives at most 10,000 theirs),
and one steady sweep. Goals: no part over 30 s of CPU (a Durable Object event's default); sweeps as table 6's. ${load}

${snapshotApplyTable(r)}
${agentSteadyLine(r)}
`;
}

/** Table 6, continued: one alarm run over a full batch (issue 25). */
export function alarmBatchSection(r: AlarmBatch, load: string): string {
  return `
**One alarm run over a full batch** (bench/alarm-batch.ts): direct mode, ${int(r.namespaces)} watched namespaces, ${int(r.batch)} runners
whose jobs completed on a webhook's word so that their grace ends at the same second, beside ${int(r.background)} in-progress rows;
the alarm reads each due runner by name in every namespace and deletes it (the deletion cap raised to ${int(r.batch)} for this
measurement, so every one is deleted). Goal: no alarm run over 5 s of CPU. ${load}

${alarmBatchTable(r)}
`;
}

/** The agent-mode steady sweep in one line: the last sweep that gave no first look and logged nothing. */
export function agentSteadyLine(r: SnapshotApply): string {
  const steady = r.sweeps.filter((w) => w.deferred === 0 && w.decisionLines === 0).at(-1);
  const firsts = r.sweeps.filter((w) => w.decisionLines > 0);
  if (!steady) return "In agent mode no steady sweep was measured.";
  const most = Math.max(...firsts.map((w) => w.cpuMs), 0);
  return `In agent mode a steady sweep over the same ${int(steady.checked)} runners takes ${(steady.cpuMs / 1000).toFixed(2)} s of workerd CPU; their first looks took ${firsts.length} sweeps, the largest ${(most / 1000).toFixed(2)} s.`;
}

/** Table 6, continued: the agent's heap with the fleet in its view, beside the objects it lists. */
export function agentMemoryParagraph(m: AgentMemory): string {
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  const s = (ms: number | undefined) => `${((ms ?? 0) / 1000).toFixed(2)} s`;
  return `
**The agent's heap** with ${int(m.runners)} runners (bench/agent-memory.ts: the agent's own list, src/agent/kube-runners.ts,
through client-node from a page server on 127.0.0.1, into its view, src/agent/runner-view.ts; the Kubernetes stand-in's
objects, pod template and managedFields, ${(m.objectBytes / 1024).toFixed(1)} KiB of JSON each; the heap read under \`--expose-gc\`): the view keeps
**${int(Math.round(m.keptBytesPerRunner))} bytes a runner** (${mib(m.keptBytesPerRunner * m.runners)}), only the fields the ledger is sent (AgentRunner);
the same runners held as the parsed objects would take ${((m.rawBytesPerRunner ?? 0) / 1024).toFixed(1)} KiB each (${mib((m.rawBytesPerRunner ?? 0) * m.runners)}). The list holds one
page of 500 at a time, ${mib(m.pageHeapBytes ?? 0)} parsed. It took ${s(m.listCpuMs)} of the agent's CPU; its pages' JSON.parse alone ${s(m.parseWholeMs)},
or ${s(m.parseCutMs)} with managedFields cut from the text first (${mib(m.pageHeapBytesWithoutManagedFields ?? 0)} a page) as direct mode does: ${
    (m.parseCutMs ?? 0) >= (m.parseWholeMs ?? 0)
      ? "in Node the cut costs more than the parse it saves, so the agent parses its pages whole."
      : "the cut would save that much of the parse; the agent still parses its pages whole."
  }
`;
}
