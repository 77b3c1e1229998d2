// Step 3: the Worker's secrets, in one `wrangler secret bulk` through stdin.
// Setup stores a secret only where there is none, or where it stored it itself;
// one that was there before is named and kept (unless --replace).
import { StepError, type StepContext } from "./context.ts";
import { newToken } from "./tokens.ts";
import { putSecrets, secretNames } from "./wrangler.ts";

const GITHUB_SECRETS = ["GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET"];

export function wantedSecrets(c: StepContext): string[] {
  return [...GITHUB_SECRETS, "ADMIN_TOKEN", "METRICS_TOKEN", ...(c.a.mode === "agent" ? ["AGENT_TOKEN"] : [])];
}

/** Stores `values`; records them as setup's own. */
export async function storeSecrets(c: StepContext, values: Record<string, string>): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await putSecrets(c.wrangler, values);
  for (const k of Object.keys(values)) if (!c.state.secretsBySetup.includes(k)) c.state.secretsBySetup.push(k);
  c.save();
}

export async function secretsStep(c: StepContext): Promise<void> {
  c.say.step("3. The Worker's secrets");
  const wanted = wantedSecrets(c);
  const missing = wanted.filter((k) => !c.state.secretsBySetup.includes(k) && !c.state.secretsKept.includes(k));
  if (missing.length === 0) {
    c.say.done(`all ${wanted.length} secrets were stored by an earlier run (${wanted.join(", ")}): kept`);
    return;
  }
  const present = (await secretNames(c.wrangler)) ?? [];
  const values: Record<string, string> = {};
  for (const k of missing) {
    if (present.includes(k) && !c.a.replace) {
      c.state.secretsKept.push(k);
      c.say.warn(`${k} was already set on the Worker, not by setup: kept (--replace to set a new one)`);
      continue;
    }
    const held = c.memory.get(k) ?? (GITHUB_SECRETS.includes(k) ? undefined : newToken());
    if (held === undefined) {
      const app = c.state.app;
      throw new StepError(
        `GitHub App ${app?.id ?? "?"} was made, but setup stopped before its key reached the Worker, and the key was only in that run's memory. ` +
          "Either delete that App on GitHub (its settings, Advanced) and run setup again, or on its settings page generate a private key and set a new webhook secret, then run again with " +
          `--app-id ${app?.id ?? "ID"} --app-key-file KEY.pem --webhook-secret-file SECRET.txt`,
      );
    }
    c.memory.set(k, held);
    values[k] = held;
  }
  await storeSecrets(c, values);
  c.save();
  c.say.done(
    `stored ${Object.keys(values).length} secrets on Worker ${c.a.name}: ${Object.keys(values).join(", ") || "none"} (through stdin; not on disk, not on a command line)`,
  );
}

/**
 * A token setup made, as this run holds it. A resumed run no longer holds one it
 * stored before (memory only): it makes a new one and replaces its own. A token
 * setup did not store is never replaced: undefined.
 */
export async function heldToken(c: StepContext, name: string): Promise<string | undefined> {
  const held = c.memory.get(name);
  if (held !== undefined) return held;
  if (!c.state.secretsBySetup.includes(name)) return undefined;
  const fresh = newToken();
  await storeSecrets(c, { [name]: fresh });
  c.memory.set(name, fresh);
  c.say.info(`made a new ${name} and stored it on the Worker: the one an earlier run stored was in that run's memory only`);
  return fresh;
}
