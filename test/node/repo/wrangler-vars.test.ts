// The wrangler.toml users copy and merge sets no setting to its default: a default written
// there once overrode a cap an upgrading user had set under its old name (…_PER_SWEEP), and
// the cap loosened without a word beyond a log line. With that file and the old name set,
// the old cap holds.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSettings } from "../../../src/config/settings.ts";
import { ROOT } from "../../../scripts/lib/local-stack.ts";

/** The [vars] table of wrangler.toml: `KEY = "value"` lines up to the next table. */
function shippedVars(): Record<string, string> {
  const vars: Record<string, string> = {};
  let table = "";
  for (const line of readFileSync(join(ROOT, "wrangler.toml"), "utf8").split("\n")) {
    const header = /^\s*\[+([^\]]+)\]+/.exec(line);
    if (header) table = header[1]!.trim();
    const kv = /^([A-Z_][A-Z0-9_]*)\s*=\s*"([^"]*)"/.exec(line);
    if (table === "vars" && kv) vars[kv[1]!] = kv[2]!;
  }
  return vars;
}

// A valid direct-mode deployment's secrets and place (none of them in wrangler.toml).
const DEPLOYMENT = {
  GITHUB_WEBHOOK_SECRET: "test-webhook-secret-0123456789",
  GITHUB_APP_ID: "1",
  GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\\n-----END RSA PRIVATE KEY-----",
  KUBE_API_URL: "https://kube.example.invalid",
  KUBE_TOKEN: "test-kube-token",
  REAPER_NAMESPACES: "arc-runners",
  ADMIN_TOKEN: "test-admin-token-0123456789abcdef",
};

function settingsOf(env: Record<string, string>) {
  const result = readSettings(env);
  if (!result.ok) throw new Error(result.errors.join("; "));
  return result.settings;
}

describe("wrangler.toml's [vars]", () => {
  it("sets nothing to the code's default (GITHUB_API_URL aside: it names the GHES form beside it)", () => {
    const vars = shippedVars();
    expect(Object.keys(vars).length).toBeGreaterThan(0);
    const atDefault = Object.keys(vars).filter((k) => {
      const without = { ...DEPLOYMENT, ...vars };
      delete without[k as keyof typeof without];
      return JSON.stringify(settingsOf({ ...DEPLOYMENT, ...vars })) === JSON.stringify(settingsOf(without));
    });
    expect(atDefault).toEqual(["GITHUB_API_URL"]);
  });

  it("with an upgrading user's caps under their old names, those caps hold", () => {
    const s = settingsOf({ ...DEPLOYMENT, ...shippedVars(), REAPER_MAX_DELETIONS_PER_SWEEP: "2", REAPER_MAX_GITHUB_CALLS_PER_SWEEP: "5" });
    expect(s).toMatchObject({ maxDeletionsPerMinute: 2, maxGithubCallsPerMinute: 5 });
  });
});
