// GET /admin/runners/{name}?format=html: the runner's story as a page, for the
// bearer token or a session (the JSON of the same path takes the bearer only).
import type { Context, Next } from "hono";
import { errorPageHtml, githubWebUrl, loginPageHtml } from "../admin/page.tsx";
import { runnerPageHtml } from "../admin/runner-page.tsx";
import { ledgerFor, withAdmin } from "../durable/ledger-for.ts";
import type { AppEnv } from "./app-env.ts";
import { pageHeaders } from "./admin-page-route.ts";
import { isRunnerName } from "./admin-runners-route.ts";
import { isAdmin } from "./admin-session.ts";

export async function storyPageOrNext(c: Context<AppEnv>, next: Next): Promise<Response | void> {
  if (c.req.query("format") !== "html") return next();
  const settings = c.get("settings");
  const headers = await pageHeaders();
  if (!(await isAdmin(c, settings))) return c.html(loginPageHtml({}), 401, headers);
  const name = c.req.param("name") ?? "";
  if (!isRunnerName(name)) return c.html(errorPageHtml(`runner name ${JSON.stringify(name)} is not a Kubernetes object name`), 400, headers);
  const story = await withAdmin(ledgerFor(c.env, settings.ledgerName), (admin) => admin.story(name));
  if (story.jobs.length === 0) return c.html(errorPageHtml(`no runner named ${name} in the ledger`), 404, headers);
  return c.html(runnerPageHtml({ story, githubWebUrl: githubWebUrl(settings.githubApiUrl), policy: settings }), 200, headers);
}
