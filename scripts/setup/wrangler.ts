// wrangler, the one way to Cloudflare: deploy, and secrets through stdin only
// (`wrangler secret bulk` reads JSON from stdin; nothing on argv or disk).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { run, tail } from "./run.ts";

export interface Wrangler {
  root: string;
  /** The config the team commits (./wrangler.toml, or --wrangler-config). */
  config: string;
  /** The environment in it that is this deployment (its name is the Worker's). */
  env: string;
}

function wranglerRun(w: Wrangler, args: string[], stdin?: string) {
  const bin = join(w.root, "node_modules/wrangler/bin/wrangler.js");
  return run(process.execPath, [bin, ...args, "--config", w.config, "--env", w.env], {
    cwd: w.root,
    stdin,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0" },
  });
}

/** The names of the Worker's secrets, or undefined when there is no such Worker. */
export async function secretNames(w: Wrangler): Promise<string[] | undefined> {
  const r = await wranglerRun(w, ["secret", "list", "--format", "json"]);
  if (r.code !== 0) {
    if (/10007|does not exist|not found/i.test(r.out)) return undefined;
    throw new Error(`wrangler secret list failed:\n${tail(r.out)}`);
  }
  // The JSON starts on a line of its own, after any warning (which may hold brackets too).
  const start = /^\s*\[/m.exec(r.out)?.index;
  const list = JSON.parse(start !== undefined ? r.out.slice(start) : "[]") as { name: string }[];
  return list.map((s) => s.name);
}

/** wrangler deploy; answers the workers.dev URL it reports (undefined when it reports none). */
export async function deploy(w: Wrangler): Promise<string | undefined> {
  const r = await wranglerRun(w, ["deploy"]);
  if (r.code !== 0) throw new Error(`wrangler deploy failed:\n${tail(r.out)}`);
  return /https:\/\/[^\s]+\.workers\.dev/.exec(r.out)?.[0];
}

/** Stores the secrets in one request; values travel on stdin only. */
export async function putSecrets(w: Wrangler, secrets: Record<string, string>): Promise<void> {
  const r = await wranglerRun(w, ["secret", "bulk"], JSON.stringify(secrets));
  if (r.code !== 0 || !/successfully created|No secrets were created/i.test(r.out)) throw new Error(`wrangler secret bulk failed:\n${tail(r.out)}`);
}

/**
 * Makes sure wrangler can reach the account: CLOUDFLARE_API_TOKEN, or wrangler's
 * own login. Interactive: runs `wrangler login` (it opens the browser) when needed.
 */
export async function ensureLogin(w: Wrangler, interactive: boolean): Promise<"token" | "login" | "logged-in"> {
  if (process.env["CLOUDFLARE_API_TOKEN"]) return "token";
  const who = await wranglerRunPlain(w, ["whoami"]);
  if (!/not authenticated|wrangler login/i.test(who.out)) return "logged-in";
  if (!interactive)
    throw new Error(
      "wrangler is not logged in to Cloudflare: run npx wrangler login, or (no browser here) set CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID (the token's permissions: docs/deploy.md#a-cloudflare-api-token), then run setup again",
    );
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [join(w.root, "node_modules/wrangler/bin/wrangler.js"), "login"], {
      cwd: w.root,
      stdio: "inherit",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    });
    child.on("close", (c) => resolve(c ?? 1));
  });
  if (code !== 0) throw new Error("wrangler login did not finish: run npx wrangler login, then setup again");
  return "login";
}

function wranglerRunPlain(w: Wrangler, args: string[]) {
  return run(process.execPath, [join(w.root, "node_modules/wrangler/bin/wrangler.js"), ...args], {
    cwd: w.root,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
  });
}
