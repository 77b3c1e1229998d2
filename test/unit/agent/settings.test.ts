// The agent's settings from its environment (src/agent/settings.ts): every bad setting named,
// the token and an unparsable URL never echoed. The proxy settings: test/unit/agent/proxy.test.ts.
import { describe, expect, it } from "vitest";
import { readSettings } from "../../../src/agent/settings.ts";

const GOOD_TOKEN = "agent-main-test-token-0123456789-abcdefghijkl";

describe("readSettings", () => {
  const good = {
    ARC_REAPER_URL: "https://arc-reaper.example.workers.dev/",
    AGENT_TOKEN: GOOD_TOKEN,
    REAPER_NAMESPACES: "arc-runners, team-b",
    AGENT_DRY_RUN: "true",
  };

  it("reads good settings and derives the WebSocket address of /agent", () => {
    expect(readSettings(good)).toEqual({
      ok: true,
      settings: {
        reaperUrl: "https://arc-reaper.example.workers.dev",
        agentUrl: "wss://arc-reaper.example.workers.dev/agent",
        token: GOOD_TOKEN,
        cluster: "default",
        namespaces: ["arc-runners", "team-b"],
        dryRun: true,
        healthPort: 8080,
        proxy: { httpsProxy: undefined, httpProxy: undefined, noProxy: [] },
      },
    });
    expect(readSettings({ ...good, AGENT_CLUSTER: " eu-west " })).toMatchObject({ ok: true, settings: { cluster: "eu-west" } });
    const local = readSettings({ ...good, ARC_REAPER_URL: "http://127.0.0.1:8787", AGENT_DRY_RUN: undefined });
    expect(local).toMatchObject({ ok: true, settings: { agentUrl: "ws://127.0.0.1:8787/agent", dryRun: false } });
    expect(readSettings({ ...good, ARC_REAPER_URL: "http://localhost:8787/base/" })).toMatchObject({
      ok: true,
      settings: { agentUrl: "ws://localhost:8787/base/agent" },
    });
  });

  it.each([
    ["ARC_REAPER_URL", { ARC_REAPER_URL: "http://arc-reaper.example.com" }, /ARC_REAPER_URL must use https:\/\//],
    ["ARC_REAPER_URL", { ARC_REAPER_URL: "not a url" }, /ARC_REAPER_URL is not a URL/],
    ["ARC_REAPER_URL", { ARC_REAPER_URL: "https://user:pw@x.example" }, /ARC_REAPER_URL must not carry credentials/],
    ["AGENT_TOKEN", { AGENT_TOKEN: "short" }, /AGENT_TOKEN must be at least 32 characters, got 5/],
    ["AGENT_TOKEN", { AGENT_TOKEN: "REPLACE_ME_with_the_same_secret_as_the_Workers_AGENT_TOKEN" }, /AGENT_TOKEN is still the placeholder/],
    ["AGENT_TOKEN", { AGENT_TOKEN: `${GOOD_TOKEN.slice(0, 20)} ${GOOD_TOKEN.slice(20)}` }, /AGENT_TOKEN must not contain whitespace/],
    ["AGENT_CLUSTER", { AGENT_CLUSTER: "EU_West" }, /AGENT_CLUSTER must be a DNS label .*"EU_West"/],
    ["REAPER_NAMESPACES", { REAPER_NAMESPACES: " , " }, /REAPER_NAMESPACES is required/],
    ["REAPER_NAMESPACES", { REAPER_NAMESPACES: "arc-runners,Team_B" }, /REAPER_NAMESPACES: "Team_B" is not a valid namespace name/],
    ["REAPER_NAMESPACES", { REAPER_NAMESPACES: "a,a" }, /REAPER_NAMESPACES names "a" twice/],
    ["AGENT_DRY_RUN", { AGENT_DRY_RUN: "yes" }, /AGENT_DRY_RUN must be true or false, got "yes"/],
    ["AGENT_HEALTH_PORT", { AGENT_HEALTH_PORT: "http" }, /AGENT_HEALTH_PORT must be a port number from 0 to 65535, got "http"/],
    ["AGENT_HEALTH_PORT", { AGENT_HEALTH_PORT: "70000" }, /AGENT_HEALTH_PORT must be a port number/],
  ])("refuses a bad %s, naming it", (_name, change, message) => {
    const r = readSettings({ ...good, ...change });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.join("\n")).toMatch(message);
  });

  it("drops surrounding whitespace from the token, as the Worker does (a Secret written with echo ends in a newline)", () => {
    expect(readSettings({ ...good, AGENT_TOKEN: `  ${GOOD_TOKEN}\n` })).toMatchObject({ ok: true, settings: { token: GOOD_TOKEN } });
  });

  it("never echoes an ARC_REAPER_URL that does not parse (it may hold credentials)", () => {
    const secret = "https://user:s3cret@[bad";
    const r = readSettings({ ...good, ARC_REAPER_URL: secret });
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).not.toContain("s3cret");
  });

  it("never echoes the token in a problem", () => {
    const secret = "s3cret-but-too-short";
    const r = readSettings({ ...good, AGENT_TOKEN: secret });
    expect(JSON.stringify(r)).not.toContain(secret);
  });
});
