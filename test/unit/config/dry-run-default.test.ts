// REAPER_DRY_RUN fails safe: unset (or blank) is dry run, with a warning that
// says so (logged once, shown in /healthz/deep); set, it is what it says, with
// no warning. Before 0.2.0 unset meant deleting.
import { describe, expect, it } from "vitest";
import { readSettings } from "../../../src/config/settings.ts";

const BASE = {
  GITHUB_WEBHOOK_SECRET: "x".repeat(32),
  GITHUB_APP_ID: "123",
  GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----",
  KUBE_API_URL: "https://kube.example.invalid",
  KUBE_TOKEN: "t".repeat(20),
  REAPER_NAMESPACES: "arc-runners",
  ADMIN_TOKEN: "a".repeat(32),
};

function dryRun(value: string | undefined): { dryRun: boolean; warnings: string[] } {
  const result = readSettings(value === undefined ? BASE : { ...BASE, REAPER_DRY_RUN: value });
  if (!result.ok) throw new Error(result.errors.join("; "));
  return { dryRun: result.settings.dryRun, warnings: result.settings.warnings.filter((w) => w.startsWith("REAPER_DRY_RUN")) };
}

describe("REAPER_DRY_RUN", () => {
  it("unset or blank is dry run, and says so", () => {
    for (const unset of [undefined, "", "  "]) {
      expect(dryRun(unset), JSON.stringify(unset)).toEqual({
        dryRun: true,
        warnings: [expect.stringMatching(/REAPER_DRY_RUN is unset: dry run, the default since 0\.2\.0/)],
      });
    }
  });

  it("set is what it says, without a warning", () => {
    expect(dryRun("true")).toEqual({ dryRun: true, warnings: [] });
    expect(dryRun("1")).toEqual({ dryRun: true, warnings: [] });
    expect(dryRun("false")).toEqual({ dryRun: false, warnings: [] });
    expect(dryRun("0")).toEqual({ dryRun: false, warnings: [] });
  });

  it("anything else is refused, by name", () => {
    const result = readSettings({ ...BASE, REAPER_DRY_RUN: "maybe" });
    expect(result).toMatchObject({ ok: false, errors: ["REAPER_DRY_RUN must be true or false"] });
  });
});
