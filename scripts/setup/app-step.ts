// Step 2: the GitHub App, by the manifest flow (or one you already have, by
// --app-id and --app-key-file). Its key and webhook secret go to memory only;
// the secrets step stores them on the Worker right after, in the same run.
import { readFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import { StepError, type StepContext } from "./context.ts";
import { startManifestFlow } from "./manifest-page.ts";

function manifest(c: StepContext, workerUrl: string): Record<string, unknown> {
  const base = JSON.parse(readFileSync(`${c.root}/infra/github-app/manifest.json`, "utf8")) as Record<string, unknown>;
  // App names are unique on GitHub and at most 34 characters; GitHub's page lets the user change it.
  const name = `${c.a.name}-${c.a.org}`.slice(0, 34).replace(/-+$/, "");
  return { ...base, name, url: workerUrl, hook_attributes: { url: `${workerUrl}/webhook`, active: true } };
}

/**
 * The port-forward that brings setup's page to a machine with a browser: the
 * same port on both ends, so the Host header is the one the page accepts.
 */
export function sshForward(port: number, env: NodeJS.ProcessEnv = process.env): string {
  // SSH_CONNECTION: "client-ip client-port server-ip server-port" when setup runs in an SSH session.
  const host = (env["SSH_CONNECTION"] ?? "").split(" ")[2] || hostname();
  return `ssh -N -L ${port}:127.0.0.1:${port} ${userInfo().username}@${host}`;
}

export async function appStep(c: StepContext): Promise<void> {
  c.say.step("2. The GitHub App");
  const app = c.state.app;
  const given = c.a.existingApp;
  if (given && (!app || app.id === given.id)) {
    if (!given.webhookSecretFile)
      throw new StepError(
        `--app-id ${given.id}: setup also needs that App's webhook secret, in a file given with --webhook-secret-file (on the App's settings page, set a new one and save it to that file).`,
      );
    c.memory.set("GITHUB_APP_PRIVATE_KEY", readFileSync(given.keyFile, "utf8").trim());
    c.memory.set("GITHUB_WEBHOOK_SECRET", readFileSync(given.webhookSecretFile, "utf8").trim());
    c.memory.set("GITHUB_APP_ID", String(given.id));
    c.state.app ??= { id: given.id, slug: null, madeBySetup: false };
    c.save();
    c.say.done(`using App ${given.id} (its key read from ${given.keyFile}; nothing copied)`);
    return;
  }
  if (app) {
    c.say.done(`App ${app.id}${app.slug ? ` (${app.slug})` : ""} ${app.madeBySetup ? "was made by an earlier run" : "is the one you gave"}: kept`);
    return;
  }
  const workerUrl = c.state.worker?.url;
  if (!workerUrl) throw new StepError("the Worker's URL is not known yet: run setup again");
  const flow = await startManifestFlow({ place: c.a.github, accountType: c.a.accountType, org: c.a.org, manifest: manifest(c, workerUrl) });
  try {
    c.say.info(`Open ${flow.url} and click the button: GitHub shows the App (webhook ${workerUrl}/webhook); choose Create GitHub App.`);
    c.say.info(`No browser on this machine? On one that has one: ${sshForward(flow.port)}, then open the same URL there.`);
    c.say.info("waiting for GitHub to send your browser back here ...");
    if (c.a.interactive) c.open(flow.url);
    const made = await flow.done;
    c.memory.set("GITHUB_APP_ID", String(made.id));
    c.memory.set("GITHUB_APP_PRIVATE_KEY", made.pem.trim());
    c.memory.set("GITHUB_WEBHOOK_SECRET", made.webhookSecret);
    c.state.app = { id: made.id, slug: made.slug, madeBySetup: true };
    c.save();
    c.say.done(`made GitHub App ${made.slug} (id ${made.id}); its key and webhook secret are in memory until the next step stores them on the Worker`);
  } finally {
    await flow.close();
  }
}
