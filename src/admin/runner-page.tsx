// The explain page, GET /admin/runners/{name}?format=html: every job this
// runner name had, newest first, each with every fact and verdict change in
// order, when it happened and where it came from. Server-rendered like the
// admin page (page.tsx): escaped by hono/jsx, no script, the same CSP.
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { RunnerRow } from "../ledger/queries.ts";
import type { StoryEntry } from "../model/runner.ts";
import { closedHow } from "./closed-how.ts";
import { Reason } from "./reason-cell.tsx";
import { jobUrl, Layout, runUrl } from "./page.tsx";
import { safeLink } from "./safe-link.ts";

type Policy = { graceSeconds: number; maxJobSeconds: number };

export interface RunnerStory {
  runner: string;
  jobs: (RunnerRow & { story: StoryEntry[] })[];
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where a story entry came from, in words. */
function sourceLabel(source: string): string {
  if (GUID.test(source)) return `webhook delivery ${source}`;
  switch (source) {
    case "rest":
      return "GitHub REST read";
    case "cluster":
      return "cluster read";
    case "alarm":
      return "alarm";
    case "sweep":
      return "sweep";
    case "admin":
      return "admin";
    default:
      return source;
  }
}

function Fact(props: { term: string; value: string | number | null }) {
  return (
    <>
      <dt>{props.term}</dt>
      <dd>{props.value === null || props.value === "" ? "—" : String(props.value)}</dd>
    </>
  );
}

/** An author-written name, isolated so that its direction cannot spill into the text around it. */
function NameFact(props: { term: string; value: string | null }) {
  return (
    <>
      <dt>{props.term}</dt>
      <dd>{props.value === null ? "—" : <bdi class={`name-${props.term}`}>{props.value}</bdi>}</dd>
    </>
  );
}

function Job(props: { job: RunnerStory["jobs"][number]; web: string; policy: Policy }) {
  const j = props.job;
  const open = j.state === "running" || j.state === "finished";
  return (
    <section class="job" data-job={String(j.jobId)}>
      <h2>
        Job{" "}
        <a class="job" href={jobUrl(props.web, j.repository, j.runId, j.jobId)} rel="noreferrer">
          {j.jobId}
        </a>{" "}
        of run{" "}
        <a class="run" href={safeLink(j.runUrl, runUrl(props.web, j.repository, j.runId))} rel="noreferrer">
          {j.runId}
        </a>
        {j.runAttempt > 1 ? ` (attempt ${j.runAttempt})` : ""} in {j.repository}
      </h2>
      <dl class="sweep">
        <NameFact term="workflow" value={j.workflow} />
        <NameFact term="job" value={j.job} />
        <NameFact term="branch" value={j.branch} />
        <Fact term="state" value={j.conclusion ? `${j.state} ${j.conclusion}` : j.state} />
        <dt>reason</dt>
        <dd>
          <Reason row={j} />
        </dd>
        <Fact term="namespace" value={j.namespace} />
        <Fact term="uid" value={j.uid} />
        <Fact term="started" value={j.startedAt} />
        <Fact term="completed" value={j.completedAt} />
        <Fact term="decided" value={j.decidedAt} />
        {open ? (
          <Fact term="next judged" value={j.dueAt} />
        ) : (
          <>
            <Fact term="closed" value={`${closedHow(j, props.policy)} at ${j.closedAt ?? "an unknown time"}`} />
            <Fact term="leaves the history" value={j.prunedAt} />
          </>
        )}
      </dl>
      <table class="story">
        <thead>
          <tr>
            <th>Time</th>
            <th>What</th>
            <th>Source</th>
          </tr>
        </thead>
        <tbody>
          {j.story.map((e) => (
            <tr data-source={e.source}>
              <td>
                <time datetime={e.at}>{e.at}</time>
              </td>
              <td class="what">
                <Reason row={{ reason: e.what, code: e.code ?? null }} />
              </td>
              <td>{sourceLabel(e.source)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function runnerPageHtml(p: { story: RunnerStory; githubWebUrl: string; policy: Policy }): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<!DOCTYPE html>${(
    <Layout title={`arc-reaper: ${p.story.runner}`}>
      <header>
        <h1>
          Runner <code>{p.story.runner}</code>
        </h1>
        <a href="/admin">All runners</a>
      </header>
      <p class="mode">
        {p.story.jobs.length} job{p.story.jobs.length === 1 ? "" : "s"} on this runner name, newest first; each story in the order it happened.
      </p>
      {p.story.jobs.map((job) => (
        <Job job={job} web={p.githubWebUrl} policy={p.policy} />
      ))}
    </Layout>
  )}`;
}
