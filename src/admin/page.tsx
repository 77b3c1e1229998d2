// The admin page: what arc-reaper tracks, why, and what the last sweep did.
// Server-rendered with hono/jsx, which escapes every text and attribute value;
// no script at all, so the page's CSP can forbid scripts outright.
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { AgentStatus } from "../agent-link/agent-link.ts";
import type { LastSweep as LastSweepFigures } from "../ledger/memory-table.ts";
import { AgentBanners } from "./agent-banner.tsx";
import { closedHow } from "./closed-how.ts";
import { DayChart } from "./day-chart.tsx";
import { IdleRunnersTable } from "./idle-runners-table.tsx";
import type { IdleCount } from "../model/idle.ts";
import { FailedRunnerTable } from "./failed-runners-table.tsx";
import { formatDuration } from "./format-duration.ts";
import { Reason } from "./reason-cell.tsx";
import { safeLink } from "./safe-link.ts";
import type { DayAtGlance } from "../ledger/day-at-glance.ts";
import { RUNNER_STATES, type RunnerRow, type RunnerState } from "./runner-rows.ts";

export const PAGE_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem; color: #1f2328; background: #fff; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
.mode { color: #59636e; margin: 0 0 1rem; }
header { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem; }
dl.sweep { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; }
dl.sweep dt { color: #59636e; }
dl.sweep dd { margin: 0; }
nav.filter a { margin-right: .75rem; }
nav.filter a[aria-current="page"] { font-weight: 600; text-decoration: none; color: #1f2328; }
table { border-collapse: collapse; width: 100%; margin-top: .75rem; }
th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border-bottom: 1px solid #d1d9e0; }
th { background: #f6f8fa; }
td { white-space: nowrap; }
td.reason { white-space: normal; min-width: 24rem; }
code.code { color: #59636e; font-size: .85em; }
.state { display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-size: .85rem; border: 1px solid #d1d9e0; }
.state-running { background: #ddf4ff; }
.state-finished { background: #fff8c5; }
.state-failed { background: #ffd8b5; }
td.arc-message { white-space: normal; min-width: 20rem; overflow-wrap: anywhere; }
.state-reaped { background: #ffebe9; }
.state-gone { background: #eff2f5; }
.error { color: #d1242f; }
form.login { display: flex; gap: .5rem; align-items: center; margin-top: 1rem; }
form.login input { font: inherit; padding: .3rem .5rem; min-width: 22rem; }
button { font: inherit; padding: .3rem .8rem; }
.paused { background: #fff1e5; border: 1px solid #fb8f44; padding: .5rem .8rem; margin: 0 0 1rem; }
header form { display: inline-block; margin-left: .5rem; }
table.story td.what { white-space: normal; }
td.names { white-space: normal; min-width: 8rem; max-width: 22rem; overflow-wrap: anywhere; }
td .closed { color: #59636e; }
#day-chart { max-width: 100%; height: auto; display: block; }
ul.legend { list-style: none; padding: 0; margin: .25rem 0; display: flex; gap: 1.25rem; }
#delay { margin: .25rem 0 0; }
ul.legend li.utc { color: #59636e; }
`;

export interface AdminPageProps {
  rows: RunnerRow[];
  /** Rows per state before filtering, for the filter links. */
  counts: Record<RunnerState, number>;
  state: RunnerState | undefined;
  /** The cursor of the next page of rows, when there is one. */
  nextCursor?: string | null;
  /** The listing's other filters, kept by the next-page link. */
  repo?: string;
  cluster?: string;
  limit?: number;
  lastSweep: LastSweepFigures | undefined;
  now: number;
  githubWebUrl: string;
  settings: { dryRun: boolean; graceSeconds: number; maxJobSeconds: number; namespaces: string[] };
  /** A session cookie (offer to log out) or a bearer header (nothing to log out of). */
  auth: "bearer" | "session";
  /** Deletions paused (POST /admin/pause): since when, by what. */
  paused?: { since: string; by: string };
  /** Agent mode: each watched cluster's agent (a banner when one is not connected); absent in direct mode. */
  agents?: AgentStatus[] | null;
  /** Runners reaped, kept and gone per hour, and the delay after the grace. */
  day: DayAtGlance;
  /** Runners that never work, as the sweeps counted them; absent before the first count. */
  idle?: IdleCount;
}

/** https://github.com for api.github.com, https://HOST for a GHES https://HOST/api/v3, https://X.ghe.com for api.X.ghe.com. */
export function githubWebUrl(apiUrl: string): string {
  try {
    const url = new URL(apiUrl);
    if (url.hostname === "api.github.com") return "https://github.com";
    if (/\/api\/v3\/?$/.test(url.pathname)) return `${url.protocol}//${url.host}`;
    if (url.hostname.startsWith("api.") && url.hostname.endsWith(".ghe.com")) return `${url.protocol}//${url.hostname.slice(4)}`;
  } catch {
    // fall through
  }
  return "https://github.com";
}

const pathOf = (repo: string): string => repo.split("/").map(encodeURIComponent).join("/");
export const runUrl = (web: string, repo: string, runId: number): string => `${web}/${pathOf(repo)}/actions/runs/${runId}`;
export const jobUrl = (web: string, repo: string, runId: number, jobId: number): string => `${runUrl(web, repo, runId)}/job/${jobId}`;

function Relative(props: { at: string | null; now: number }) {
  if (!props.at) return <span>—</span>;
  const ms = Date.parse(props.at) - props.now;
  const words = ms > 0 ? `in ${formatDuration(ms)}` : `${formatDuration(-ms)} ago`;
  return (
    <time datetime={props.at} title={props.at}>
      {words}
    </time>
  );
}

function Age(props: { since: string | null; now: number }) {
  if (!props.since) return <span>—</span>;
  return (
    <time datetime={props.since} title={`job started ${props.since}`}>
      {formatDuration(props.now - Date.parse(props.since))}
    </time>
  );
}

export function Layout(props: { title: string; children?: unknown }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{props.title}</title>
        <style dangerouslySetInnerHTML={{ __html: PAGE_CSS }} />
      </head>
      <body>{props.children}</body>
    </html>
  );
}

function LastSweep(props: { sweep: LastSweepFigures | undefined; now: number }) {
  const s = props.sweep;
  if (!s) {
    return <p id="last-sweep">No sweep summary recorded yet. The cron runs a sweep every minute.</p>;
  }
  const errors = Object.entries(s.errors);
  const errorTotal = errors.reduce((n, [, v]) => n + v, 0);
  return (
    <dl id="last-sweep" class="sweep">
      <dt>at</dt>
      <dd>
        <Relative at={s.at} now={props.now} /> ({s.at})
      </dd>
      <dt>took</dt>
      <dd>{s.durationMs} ms</dd>
      <dt>runners</dt>
      <dd>
        {s.checked} checked: {s.deleted} deleted, {s.kept} kept, {s.waiting} waiting, {s.gone} gone
        {s.dryRun ? " (dry run)" : ""}
      </dd>
      <dt>errors</dt>
      <dd class={errorTotal > 0 ? "error" : undefined}>
        {errors.length === 0 ? "none" : errors.map(([kind, n]) => `${kind} ${n}`).join(", ")}
        {s.unreadable?.length ? `; could not list ${s.unreadable.join("; ")}` : ""}
      </dd>
      <dt>GitHub requests</dt>
      <dd>
        {s.githubCounted === undefined ? s.githubCalls : `${s.githubCalls} made, ${s.githubCounted} counted against the rate limit`}
        {s.rateLimitRemaining === null ? "" : `, rate limit left ${s.rateLimitRemaining}`}
      </dd>
    </dl>
  );
}

function Filter(props: { state: RunnerState | undefined; counts: Record<RunnerState, number>; cluster?: string }) {
  const total = RUNNER_STATES.reduce((n, s) => n + props.counts[s], 0);
  // The state links keep the cluster filter (the counts are over every cluster).
  const inCluster = props.cluster ? `cluster=${encodeURIComponent(props.cluster)}` : "";
  return (
    <nav class="filter" aria-label="Filter by state">
      <a href={inCluster ? `/admin?${inCluster}` : "/admin"} aria-current={props.state === undefined ? "page" : undefined}>
        all ({total})
      </a>
      {RUNNER_STATES.map((s) => (
        <a href={`/admin?state=${s}${inCluster ? `&${inCluster}` : ""}`} aria-current={props.state === s ? "page" : undefined}>
          {s} ({props.counts[s]})
        </a>
      ))}
    </nav>
  );
}

/** An author-written name, isolated so that its direction cannot spill into the text around it. */
function Name(props: { value: string | null; class: string }) {
  return props.value === null ? <span class={props.class}>—</span> : <bdi class={props.class}>{props.value}</bdi>;
}

/** Open rows: when the alarm judges them next. Closed rows: when and how they closed; nothing is due. */
function When(props: { row: RunnerRow; now: number; policy: AdminPageProps["settings"] }) {
  const r = props.row;
  if (r.state === "running" || r.state === "finished") return <Relative at={r.dueAt} now={props.now} />;
  return (
    <span class="closed">
      {closedHow(r, props.policy)}, <Relative at={r.closedAt} now={props.now} />
    </span>
  );
}

function RunnerTable(props: { rows: RunnerRow[]; now: number; web: string; policy: AdminPageProps["settings"] }) {
  if (props.rows.length === 0) return <p id="no-runners">No runners in this state.</p>;
  return (
    <table id="runners">
      <thead>
        <tr>
          <th>Runner</th>
          <th>State</th>
          <th>Repository</th>
          <th>Branch</th>
          <th>Workflow · job</th>
          <th>Run</th>
          <th>Job</th>
          <th>Age</th>
          <th>Due / closed</th>
          <th>Reason</th>
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
              <span class={`state state-${r.state}`}>{r.state}</span>
              {r.conclusion ? ` ${r.conclusion}` : ""}
            </td>
            <td>{r.repository}</td>
            <td class="names">
              <Name value={r.branch} class="branch" />
            </td>
            <td class="names">
              <Name value={r.workflow} class="workflow" /> · <Name value={r.job} class="job-name" />
            </td>
            <td>
              <a class="run" href={safeLink(r.runUrl, runUrl(props.web, r.repository, r.runId))} rel="noreferrer">
                {r.runId}
              </a>
              {r.runAttempt > 1 ? ` (attempt ${r.runAttempt})` : ""}
            </td>
            <td>
              <a class="job" href={jobUrl(props.web, r.repository, r.runId, r.jobId)} rel="noreferrer">
                {r.jobId}
              </a>
            </td>
            <td>
              <Age since={r.startedAt} now={props.now} />
            </td>
            <td>
              <When row={r} now={props.now} policy={props.policy} />
            </td>
            <td class="reason">
              <Reason row={r} />
            </td>
            <td class="cluster">
              {r.cluster ? <a href={`/admin?cluster=${encodeURIComponent(r.cluster)}`}>{r.cluster}</a> : "—"}
              {r.namespace ? ` / ${r.namespace}` : ""}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function adminPageHtml(p: AdminPageProps): HtmlEscapedString | Promise<HtmlEscapedString> {
  const { settings } = p;
  return html`<!DOCTYPE html>${(
    <Layout title={p.state ? `arc-reaper: ${p.state} runners` : "arc-reaper: runners"}>
      <header>
        <h1>arc-reaper</h1>
        <div>
          <form method="post" action={p.paused ? "/admin/resume" : "/admin/pause"}>
            <button type="submit" id={p.paused ? "resume" : "pause"}>
              {p.paused ? "Resume deletions" : "Pause deletions"}
            </button>
          </form>
          {p.auth === "session" ? (
            <form method="post" action="/admin/logout">
              <button type="submit">Log out</button>
            </form>
          ) : (
            ""
          )}
        </div>
      </header>
      {p.paused ? (
        <p id="paused" class="paused" role="status">
          Paused since {p.paused.since} (by {p.paused.by}): nothing is deleted. Decisions are still made and logged as "paused: would delete …".
        </p>
      ) : null}
      <p class="mode">
        {settings.dryRun ? "dry run: nothing is deleted" : p.paused ? "paused: nothing is deleted" : "deleting"} · grace {settings.graceSeconds}s · bound{" "}
        {formatDuration(settings.maxJobSeconds * 1000)} · namespaces {settings.namespaces.join(", ")}
      </p>
      <AgentBanners agents={p.agents} />
      <h2>Last 24 hours</h2>
      <DayChart day={p.day} />
      <h2>Last sweep</h2>
      <LastSweep sweep={p.lastSweep} now={p.now} />
      {p.idle ? <h2>Runners that never work</h2> : null}
      <IdleRunnersTable idle={p.idle} now={p.now} />
      <h2>Tracked runners{p.cluster ? ` in cluster ${p.cluster}` : ""}</h2>
      <Filter state={p.state} counts={p.counts} cluster={p.cluster} />
      {p.state === "failed" ? (
        <FailedRunnerTable rows={p.rows} now={p.now} />
      ) : (
        <RunnerTable rows={p.rows} now={p.now} web={p.githubWebUrl} policy={settings} />
      )}
      {p.nextCursor ? (
        <p>
          <a
            id="next-page"
            href={`/admin?${new URLSearchParams({ ...(p.state ? { state: p.state } : {}), ...(p.repo ? { repo: p.repo } : {}), ...(p.cluster ? { cluster: p.cluster } : {}), ...(p.limit ? { limit: String(p.limit) } : {}), cursor: p.nextCursor }).toString()}`}
          >
            next page
          </a>
        </p>
      ) : null}
    </Layout>
  )}`;
}

export function loginPageHtml(p: { error?: string }): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<!DOCTYPE html>${(
    <Layout title="arc-reaper: log in">
      <h1>arc-reaper</h1>
      <p>Log in with the ADMIN_TOKEN, or send it as an Authorization: Bearer header.</p>
      {p.error ? (
        <p class="error" role="alert">
          {p.error}
        </p>
      ) : (
        ""
      )}
      <form class="login" method="post" action="/admin/login">
        <label for="token">ADMIN_TOKEN</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required />
        <button type="submit">Log in</button>
      </form>
    </Layout>
  )}`;
}

export function errorPageHtml(message: string): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<!DOCTYPE html>${(
    <Layout title="arc-reaper: error">
      <h1>arc-reaper</h1>
      <p class="error" role="alert">
        {message}
      </p>
      <p>
        <a href="/admin">Back to all runners</a>
      </p>
    </Layout>
  )}`;
}
