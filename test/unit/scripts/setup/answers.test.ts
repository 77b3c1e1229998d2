// npm run setup's answers: the rules each one is held to, where GitHub's pages
// and API are, and how many questions the interactive mode asks (a scripted
// prompter stands in for the terminal and counts them).
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { AnswerError, resolveAnswers } from "../../../../scripts/setup/answers.ts";
import { conversionUrl, githubPlace, installUrl, newAppUrl } from "../../../../scripts/setup/github-urls.ts";
import type { Prompter } from "../../../../scripts/setup/prompter.ts";
import { checkLabels, checkLogin, checkWebUrl, checkWorkerName } from "../../../../scripts/setup/validate.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../../..");

/** Answers every question with its default (or a name when it has none), counting them. */
function scripted(): Prompter & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async text(q) {
      asked.push(q.message);
      const value = q.initial ?? "octo-org";
      expect(q.validate(value)).toBeUndefined();
      return value;
    },
    async select(q) {
      asked.push(q.message);
      return q.initial;
    },
    async confirm(q) {
      asked.push(q.message);
      return q.initial;
    },
  };
}

describe("setup's answers", () => {
  it("refuses an org with a slash, an http:// GHES, a cluster that is not a DNS label, a bad Worker name", () => {
    expect(checkLogin("--org", "octo-org/repo")).toMatchObject({ ok: false, problem: expect.stringMatching(/has a slash/) });
    expect(checkLogin("--org", "-octo")).toMatchObject({ ok: false });
    expect(checkLogin("--org", "octo-org")).toEqual({ ok: true });
    expect(checkWebUrl("--github-url", "http://github.example.com")).toMatchObject({ ok: false, problem: expect.stringMatching(/is http:\/\/: .*https:\/\//) });
    expect(checkWebUrl("--github-url", "https://github.example.com")).toEqual({ ok: true });
    expect(checkWebUrl("--github-url", "http://127.0.0.1:8080")).toEqual({ ok: true });
    expect(checkLabels("--clusters", ["eu_west"])).toMatchObject({ ok: false, problem: expect.stringMatching(/"eu_west" is not a DNS label/) });
    expect(checkLabels("--clusters", ["eu-west", "eu-west"])).toMatchObject({ ok: false, problem: expect.stringMatching(/twice/) });
    expect(checkWorkerName("Arc_Reaper")).toMatchObject({ ok: false });
  });

  it("knows where GitHub.com and a GHES host keep the manifest form, the code exchange and the install page", () => {
    const com = githubPlace("https://github.com/");
    expect(com).toEqual({ web: "https://github.com", api: "https://api.github.com", ghes: false });
    expect(newAppUrl(com, "org", "octo-org", "s1")).toBe("https://github.com/organizations/octo-org/settings/apps/new?state=s1");
    expect(newAppUrl(com, "user", "octocat", "s1")).toBe("https://github.com/settings/apps/new?state=s1");
    expect(conversionUrl(com, "abc")).toBe("https://api.github.com/app-manifests/abc/conversions");
    expect(installUrl(com, "arc-reaper-x")).toBe("https://github.com/apps/arc-reaper-x/installations/new");
    const ghes = githubPlace("https://github.example.com");
    expect(conversionUrl(ghes, "abc")).toBe("https://github.example.com/api/v3/app-manifests/abc/conversions");
    expect(installUrl(ghes, "arc-reaper-x")).toBe("https://github.example.com/github-apps/arc-reaper-x/installations/new");
  });

  it("asks 8 questions interactively in agent mode with none given, and none with every flag", async () => {
    const ask = scripted();
    const a = await resolveAnswers({}, ask, ROOT, {});
    expect(ask.asked).toHaveLength(8);
    expect(a).toMatchObject({
      org: "octo-org",
      accountType: "org",
      name: "arc-reaper",
      mode: "agent",
      clusters: ["default"],
      namespaces: ["arc-runners"],
      interactive: true,
    });
    const none = scripted();
    await resolveAnswers(
      {
        org: "octo-org",
        "account-type": "org",
        "github-url": "https://github.com",
        name: "arc-reaper",
        mode: "agent",
        clusters: "default",
        namespaces: "arc-runners",
        "agent-image": "ghcr.io/octo-org/arc-reaper-agent:0.2.0",
      },
      none,
      ROOT,
      {},
    );
    expect(none.asked).toEqual([]);
  });

  it("with --yes, a missing --org is an error naming it, and the rest take their defaults", async () => {
    await expect(resolveAnswers({}, undefined, ROOT, {})).rejects.toThrow(AnswerError);
    await expect(resolveAnswers({}, undefined, ROOT, {})).rejects.toThrow(/--org .* is needed/);
    const a = await resolveAnswers({ org: "octo-org" }, undefined, ROOT, {});
    expect(a).toMatchObject({
      mode: "agent",
      clusters: ["default"],
      namespaces: ["arc-runners"],
      github: { api: "https://api.github.com" },
      interactive: false,
      showTokens: false,
    });
  });
});
