// The admin page's table under ?state=failed: runners ARC marked Failed, with
// ARC's reason and message (cleaned when read; hono/jsx escapes them here, and
// <bdi> keeps their direction from spilling), when they failed, their scale set
// and what arc-reaper does about them.
import { formatDuration } from "./format-duration.ts";
import { Reason } from "./reason-cell.tsx";
import type { RunnerRow } from "./runner-rows.ts";

const ago = (at: string | null, now: number): string => (at === null ? "—" : `${formatDuration(now - Date.parse(at))} ago`);

export function FailedRunnerTable(props: { rows: RunnerRow[]; now: number }) {
  if (props.rows.length === 0) return <p id="no-runners">No Failed runners hold a slot.</p>;
  return (
    <table id="runners" class="failed">
      <thead>
        <tr>
          <th>Runner</th>
          <th>Scale set</th>
          <th>Failed</th>
          <th>ARC's reason and message</th>
          <th>What arc-reaper does</th>
          <th>Cluster</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r) => (
          <tr data-runner={r.name} data-state={r.state}>
            <td>
              <a class="runner" href={`/admin/runners/${encodeURIComponent(r.name)}?format=html`}>
                <code>{r.name}</code>
              </a>
            </td>
            <td>
              <bdi class="scale-set">{r.scaleSet ?? "—"}</bdi>
            </td>
            <td>
              <time datetime={r.failedAt ?? undefined} title={r.failedAt ?? undefined}>
                {ago(r.failedAt ?? null, props.now)}
              </time>
            </td>
            <td class="reason arc-message">
              <strong>
                <bdi>{r.arcReason ?? "no reason given"}</bdi>
              </strong>
              {r.arcMessage ? ": " : ""}
              {r.arcMessage ? <bdi class="message">{r.arcMessage}</bdi> : ""}
            </td>
            <td class="reason">
              <Reason row={r} />
            </td>
            <td class="cluster">
              {r.cluster ? <a href={`/admin?state=failed&cluster=${encodeURIComponent(r.cluster)}`}>{r.cluster}</a> : "—"}
              {r.namespace ? ` / ${r.namespace}` : ""}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
