import type { Context } from "hono";
import { stateFilter } from "../admin/runner-rows.ts";
import type { Settings } from "../config/settings.ts";
import type { AppEnv } from "./app-env.ts";
import { ledgerFor, withAdmin } from "../durable/ledger-for.ts";
import { MAX_PAGE, parseCursor, type RunnerQuery } from "../ledger/queries.ts";
import { DNS_LABEL, isObjectName, isOwnerRepo } from "../model/shapes.ts";

/** The listing's query: ?state=, ?repo=owner/name, ?cluster=name, ?limit=1..500, ?cursor= (from the previous page). */
export function runnerQuery(c: Context): { query?: RunnerQuery; error?: string } {
  const filter = stateFilter(c.req.query("state"));
  if (filter.error) return { error: filter.error };
  const repo = c.req.query("repo");
  if (repo !== undefined && !isOwnerRepo(repo)) return { error: `repo must be owner/name, got ${JSON.stringify(repo)}` };
  const cluster = c.req.query("cluster");
  if (cluster !== undefined && !DNS_LABEL.test(cluster)) return { error: `cluster must be a cluster name (DNS label), got ${JSON.stringify(cluster)}` };
  const limitText = c.req.query("limit");
  if (limitText !== undefined && (!/^\d+$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_PAGE)) {
    return { error: `limit must be a whole number from 1 to ${MAX_PAGE}, got ${JSON.stringify(limitText)}` };
  }
  const cursor = parseCursor(c.req.query("cursor"));
  if (cursor.error) return { error: cursor.error };
  return { query: { state: filter.state, repo, cluster, limit: limitText === undefined ? undefined : Number(limitText), cursor: cursor.cursor } };
}

/** GET /admin/runners: a page of what arc-reaper tracks and why, newest first. */
export async function listRunners(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const { query, error } = runnerQuery(c);
  if (!query) return c.json({ error }, 400);
  return c.json(await withAdmin(ledgerFor(c.env, settings.ledgerName), (admin) => admin.runners(query)));
}

/** A Kubernetes object name, as every runner's is. */
export const isRunnerName = (name: string): boolean => isObjectName(name);

/** GET /admin/runners/{name}: every job this runner name had, with its story in order. */
export async function runnerStory(c: Context<AppEnv>, settings: Settings): Promise<Response> {
  const name = c.req.param("name") ?? "";
  if (!isRunnerName(name)) return c.json({ error: `runner name ${JSON.stringify(name)} is not a Kubernetes object name` }, 400);
  const story = await withAdmin(ledgerFor(c.env, settings.ledgerName), (admin) => admin.story(name));
  if (story.jobs.length === 0) return c.json({ error: `no runner named ${name} in the ledger` }, 404);
  return c.json(story);
}
