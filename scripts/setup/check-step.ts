// Step 5: the install page, then /healthz/deep (admin bearer) until it passes:
// an agent connected per cluster (or the namespaces listed), a token minted per
// known installation, a page of deliveries.
import type { StepContext } from "./context.ts";
import { installUrl } from "./github-urls.ts";
import { heldToken } from "./secrets-step.ts";

interface Deep {
  ok: boolean;
  checks?: { name: string; ok: boolean; detail?: string }[];
}

async function deep(url: string, token: string): Promise<{ status: number; body: Deep | undefined }> {
  try {
    const r = await fetch(`${url}/healthz/deep`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(15_000) });
    const text = await r.text();
    try {
      return { status: r.status, body: JSON.parse(text) as Deep };
    } catch {
      return { status: r.status, body: undefined };
    }
  } catch {
    return { status: 0, body: undefined };
  }
}

export async function checkStep(c: StepContext, waitMs: number): Promise<boolean> {
  c.say.step("5. The check");
  const url = c.state.worker?.url ?? "";
  if (c.state.checkedAt) {
    c.say.done(`/healthz/deep passed at ${c.state.checkedAt}: nothing to do (${url}/admin)`);
    return true;
  }
  const app = c.state.app;
  if (app?.slug) {
    const install = installUrl(c.a.github, app.slug);
    c.say.info(`Install the App on the repositories whose jobs run on ARC: ${install}`);
    if (c.a.interactive) c.open(install);
  } else c.say.info("Install the App (its settings page, Install App) on the repositories whose jobs run on ARC.");
  const admin = await heldToken(c, "ADMIN_TOKEN");
  if (admin === undefined) {
    c.say.warn(`ADMIN_TOKEN was on the Worker before setup: check ${url}/healthz/deep with it yourself`);
    return false;
  }
  c.say.info(`waiting for ${url}/healthz/deep to pass (at most ${Math.round(waitMs / 60_000)} min) ...`);
  const deadline = Date.now() + waitMs;
  let last = "";
  for (;;) {
    const { status, body } = await deep(url, admin);
    if (status === 200 && body?.ok) break;
    const failing =
      body?.checks
        ?.filter((k) => !k.ok)
        .map((k) => `${k.name}: ${k.detail ?? "failing"}`)
        .join("; ") ?? (status === 0 ? "the Worker does not answer yet" : `answered ${status}`);
    if (failing !== last) c.say.info(`not yet: ${failing}`);
    last = failing;
    if (Date.now() > deadline) {
      c.say.warn("gave up waiting; run setup again to go on waiting (nothing done is undone)");
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  c.state.checkedAt = new Date().toISOString();
  c.save();
  c.say.done(`/healthz/deep passed: arc-reaper is running in dry run at ${url}`);
  return true;
}
