// The admin page's table of runners that never work (src/model/idle.ts): per
// scale set and runner version, how many are idle past REAPER_IDLE_ALERT_SECONDS
// or parked as Outdated, and since when the oldest. Text from the cluster is
// cleaned when read; hono/jsx escapes it here, and <bdi> keeps its direction.
import type { IdleCount } from "../model/idle.ts";
import { formatDuration } from "./format-duration.ts";

const WHY: Record<string, string> = {
  idle: "online, no job",
  outdated: "Outdated: ARC parked the scale set (exit 7)",
};

export function IdleRunnersTable(props: { idle: IdleCount | undefined; now: number }) {
  const idle = props.idle;
  if (!idle) return null;
  const after = formatDuration(idle.idleAlertSeconds * 1000);
  if (idle.groups.length === 0) return <p id="no-idle-runners">None: every runner got a job within {after} of being made, and no scale set is parked.</p>;
  return (
    <>
      <p class="idle-note">
        Runners without a job {after} after they were made (REAPER_IDLE_ALERT_SECONDS), or of a scale set ARC parked. GitHub assigns no job to a runner outside
        its 30-day version window, nor to labels no workflow asks for. They hold slots; arc-reaper never deletes them (ARC would make the same version again):
        update the scale set's runner image or labels.
      </p>
      <table id="idle-runners">
        <thead>
          <tr>
            <th>Scale set</th>
            <th>Runner version</th>
            <th>Runners</th>
            <th>Why</th>
            <th>Oldest made</th>
            <th>Cluster</th>
          </tr>
        </thead>
        <tbody>
          {idle.groups.map((g) => (
            <tr data-scale-set={g.scaleSet} data-why={g.why}>
              <td>
                <bdi class="scale-set">{g.scaleSet || "(unlabelled)"}</bdi>
              </td>
              <td>
                <bdi class="runner-version">{g.runnerVersion || "not told (image tag or runner-version label)"}</bdi>
              </td>
              <td class="n">{g.n}</td>
              <td class="why">{WHY[g.why] ?? g.why}</td>
              <td>
                <time datetime={new Date(g.oldestCreatedAt).toISOString()}>{formatDuration(props.now - g.oldestCreatedAt)} ago</time>
              </td>
              <td class="cluster">
                {g.cluster} / {g.namespace}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
