// The admin page's day at a glance: runners reaped, kept and gone per hour over
// the last 24 hours, as an inline SVG drawn here on the server (no script, so
// the page's CSP stays as strict), and the delay after the grace (p50, p99).
// Figures come from the ledger's hourly counters (src/ledger/day-at-glance.ts).
import type { DayAtGlance, DelayPercentile, HourFigures } from "../ledger/day-at-glance.ts";

const WIDTH = 960;
const HEIGHT = 160;
const LEFT = 36;
const BOTTOM = 20;
const TOP = 8;
const SLOT = (WIDTH - LEFT - 4) / 24;
const BAR = Math.floor(SLOT * 0.7);

/** Bottom to top in each bar. */
const SERIES = [
  { key: "reaped", label: "reaped", fill: "#cf222e" },
  { key: "kept", label: "kept (job over, not deleted)", fill: "#bf8700" },
  { key: "gone", label: "gone", fill: "#8c959f" },
] as const;

const hourLabel = (iso: string): string => `${iso.slice(11, 16)}`;
const total = (h: HourFigures): number => h.reaped + h.kept + h.gone;

// The buckets' bounds are round: 45s, 2m, 1h.
const roundSeconds = (s: number): string => (s < 60 ? `${s}s` : s < 3600 ? `${s / 60}m` : `${s / 3600}h`);

/** "≤ 5s", or "> 1h" past the largest bucket. */
function describePercentile(p: DelayPercentile): string {
  return p.atMostSeconds !== null ? `≤ ${roundSeconds(p.atMostSeconds)}` : `> ${roundSeconds(p.moreThanSeconds ?? 0)}`;
}

function Bar(props: { h: HourFigures; i: number; max: number }) {
  const { h, i, max } = props;
  const x = LEFT + i * SLOT + (SLOT - BAR) / 2;
  const plot = HEIGHT - BOTTOM - TOP;
  let y = HEIGHT - BOTTOM;
  const end = new Date(Date.parse(h.start) + 3_600_000).toISOString();
  const words = `${hourLabel(h.start)}–${hourLabel(end)} UTC: ${h.reaped} reaped, ${h.kept} kept, ${h.gone} gone; GitHub requests ${h.githubRequests} made, ${h.githubCounted} counted`;
  return (
    <g
      class="hour"
      data-hour={h.start}
      data-reaped={String(h.reaped)}
      data-kept={String(h.kept)}
      data-gone={String(h.gone)}
      data-github-requests={String(h.githubRequests)}
      data-github-counted={String(h.githubCounted)}
    >
      <title>{words}</title>
      {/* A full-height, see-through target, so that every hour has its tooltip even when empty. */}
      <rect x={String(x)} y={String(TOP)} width={String(BAR)} height={String(plot)} fill="#f6f8fa" />
      {SERIES.map((s) => {
        const n = h[s.key];
        if (n === 0) return null;
        const height = Math.max(1, (n / max) * plot);
        y -= height;
        return <rect class={`bar-${s.key}`} x={String(x)} y={y.toFixed(1)} width={String(BAR)} height={height.toFixed(1)} fill={s.fill} />;
      })}
    </g>
  );
}

export function DayChart(props: { day: DayAtGlance }) {
  const { hours, delay, keptWhy } = props.day;
  const max = Math.max(1, ...hours.map(total));
  const sums = { reaped: 0, kept: 0, gone: 0 };
  for (const h of hours) for (const s of SERIES) sums[s.key] += h[s.key];
  const summary = `${sums.reaped} reaped, ${sums.kept} kept, ${sums.gone} gone in the last 24 hours`;
  const requests = hours.reduce((a, h) => a + h.githubRequests, 0);
  const counted = hours.reduce((a, h) => a + h.githubCounted, 0);
  return (
    <section id="day" aria-label="The last 24 hours">
      <svg
        id="day-chart"
        role="img"
        aria-labelledby="day-chart-title"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width={String(WIDTH)}
        height={String(HEIGHT)}
        xmlns="http://www.w3.org/2000/svg"
      >
        <title id="day-chart-title">Runners per hour, last 24 hours (UTC): {summary}</title>
        <line x1={String(LEFT)} y1={String(HEIGHT - BOTTOM)} x2={String(WIDTH - 4)} y2={String(HEIGHT - BOTTOM)} stroke="#d1d9e0" />
        <text class="axis" x={String(LEFT - 6)} y={String(TOP + 10)} text-anchor="end" font-size="11" fill="#59636e">
          {String(max)}
        </text>
        <text class="axis" x={String(LEFT - 6)} y={String(HEIGHT - BOTTOM)} text-anchor="end" font-size="11" fill="#59636e">
          0
        </text>
        {hours.map((h, i) => (
          <Bar h={h} i={i} max={max} />
        ))}
        {hours.map((h, i) =>
          i % 3 === 0 ? (
            <text class="axis" x={(LEFT + i * SLOT + SLOT / 2).toFixed(1)} y={String(HEIGHT - 5)} text-anchor="middle" font-size="11" fill="#59636e">
              {hourLabel(h.start)}
            </text>
          ) : null,
        )}
      </svg>
      <ul class="legend">
        {SERIES.map((s) => (
          <li data-series={s.key}>
            <svg width="10" height="10" aria-hidden="true">
              <rect width="10" height="10" fill={s.fill} />
            </svg>{" "}
            {s.label} <strong>{String(sums[s.key])}</strong>
          </li>
        ))}
        <li class="utc">hours in UTC</li>
      </ul>
      <p id="delay">
        {delay
          ? `Delay after the grace: p50 ${describePercentile(delay.p50)}, p99 ${describePercentile(delay.p99)} (${delay.count} reaped).`
          : "Delay after the grace: no runner reaped in the last 24 hours."}
        {keptWhy.length > 0 ? ` Kept: ${keptWhy.map((k) => `${k.n} ${k.why}`).join(", ")}.` : ""}
      </p>
      <p id="github-calls" data-requests={String(requests)} data-counted={String(counted)}>
        {`GitHub requests in the last 24 hours: ${requests} made, ${counted} counted against the rate limit (${requests - counted} answered 304 Not Modified).`}
      </p>
    </section>
  );
}
