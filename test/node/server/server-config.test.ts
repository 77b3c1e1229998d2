// The in-cluster server's workerd config is made from wrangler.toml: these fail
// when the two drift (a binding added to wrangler.toml that the server does not
// bind, a binding the server adds that is neither a setting nor its home's, a
// different compatibility date, limit or ledger key).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { experimental_readRawConfig } from "wrangler";
import { afterAll, describe, expect, it } from "vitest";
import { SETTING_NAMES } from "../../../src/config/settings.ts";
import { buildServer, CONFIG_FILE, ROOT } from "../../../scripts/server/build.ts";
import { LEDGER_UNIQUE_KEY } from "../../../scripts/server/workerd-config.ts";

const work = mkdtempSync(join(tmpdir(), "arc-reaper-server-config-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Raw = Record<string, unknown>;
const raw = experimental_readRawConfig({ config: join(ROOT, "wrangler.toml") }).rawConfig as Raw;

/** Every binding wrangler.toml declares, by name: its vars, and each entry of a list of bindings (durable_objects.bindings included). */
function wranglerBindings(config: Raw): string[] {
  const names = Object.keys((config.vars as Raw | undefined) ?? {});
  const lists: unknown[] = [...Object.values(config), (config.durable_objects as Raw | undefined)?.bindings];
  for (const value of lists) {
    if (!Array.isArray(value)) continue;
    for (const entry of value) {
      const name = (entry as Raw)?.name ?? (entry as Raw)?.binding;
      if (typeof name === "string" && !("tag" in (entry as Raw))) names.push(name);
    }
  }
  return names;
}

const outdir = buildServer(join(work, "server"));
const capnp = readFileSync(join(outdir, CONFIG_FILE), "utf8");
const bindingsBlock = /bindings = \[\n([\s\S]*?)\n {2}\],/.exec(capnp)?.[1] ?? "";
const bound = [...bindingsBlock.matchAll(/^ {4}\(name = "([A-Z_]+)", (\w+) = (.*)\),$/gm)].map((m) => ({ name: m[1]!, kind: m[2]!, value: m[3]! }));

describe("the workerd config made from wrangler.toml", () => {
  it("binds every binding of wrangler.toml, and nothing but them, the settings and its home", () => {
    const fromWrangler = wranglerBindings(raw);
    expect(fromWrangler).toEqual(expect.arrayContaining(["LEDGER", "FRONT_DOOR", "GITHUB_API_URL"]));
    const names = bound.map((b) => b.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of fromWrangler) expect(names, `wrangler.toml's ${name}`).toContain(name);
    const allowed = new Set([...fromWrangler, ...SETTING_NAMES, "ARC_REAPER_HOME"]);
    expect(names.filter((n) => !allowed.has(n))).toEqual([]);
    // Every setting comes from the environment (a ConfigMap or a Secret), under its Cloudflare name.
    for (const name of SETTING_NAMES) expect(bound.find((b) => b.name === name)).toEqual({ name, kind: "fromEnvironment", value: `"${name}"` });
    expect(bound.find((b) => b.name === "ARC_REAPER_HOME")).toEqual({ name: "ARC_REAPER_HOME", kind: "text", value: `"cluster"` });
  });

  it("keeps wrangler.toml's compatibility date and flags, ledger class and front door limit", () => {
    expect(capnp).toContain(`compatibilityDate = "${String(raw.compatibility_date)}"`);
    for (const flag of raw.compatibility_flags as string[]) expect(capnp).toContain(`"${flag}"`);
    const ledger = (raw.durable_objects as { bindings: { name: string; class_name: string }[] }).bindings[0]!;
    expect(bound.find((b) => b.name === ledger.name)?.value).toBe(`"${ledger.class_name}"`);
    // The ledger's files on the volume are found by this key: it never changes.
    expect(capnp).toContain(`(className = "${ledger.class_name}", uniqueKey = "${LEDGER_UNIQUE_KEY}", enableSql = true)`);
    expect(LEDGER_UNIQUE_KEY).toBe("arc-reaper-ledger");
    expect(capnp).toContain("durableObjectStorage = (localDisk = ");
    const door = (raw.ratelimits as { name: string; simple: { limit: number; period: number } }[])[0]!;
    expect(bound.find((b) => b.name === door.name)?.value).toContain(
      `innerBindings = [(name = "limit", json = "${door.simple.limit}"), (name = "period", json = "${door.simple.period}")]`,
    );
  });

  it("trusts the cluster's CA for the API server alone, and the browsers' CAs (and a GHES CA) for GitHub", () => {
    const network = (config: string, name: string) =>
      new RegExp(`\\(name = "${name}", network = \\(allow = \\["public", "private"\\], tlsOptions = \\(([^)]*)\\)\\)\\)`).exec(config)?.[1];
    expect([network(capnp, "kube-api"), network(capnp, "internet")]).toEqual(["trustBrowserCas = true", "trustBrowserCas = true"]);
    const withCa = readFileSync(
      join(buildServer(join(work, "with-ca"), { kubeCa: join(work, "ca.crt"), githubCa: join(work, "ghes.crt") }), CONFIG_FILE),
      "utf8",
    );
    expect(network(withCa, "kube-api")).toBe('trustedCertificates = [embed "../ca.crt"]');
    expect(network(withCa, "internet")).toBe('trustBrowserCas = true, trustedCertificates = [embed "../ghes.crt"]');
    expect(withCa).toContain('(name = "KUBE_NET", service = "kube-api")');
  });
});
