// Where things are on GitHub.com and on a GitHub Enterprise Server: the web
// (the manifest form, the install page) and the REST API (the code exchange).
// docs/deploy.md, "GitHub.com and GitHub Enterprise Server", is the same table.
export const GITHUB_COM = "https://github.com";

export interface GithubPlace {
  /** The web, no trailing slash: https://github.com or https://HOST. */
  web: string;
  /** The REST API: https://api.github.com or https://HOST/api/v3. */
  api: string;
  ghes: boolean;
}

const trim = (u: string) => u.replace(/\/+$/, "");

/**
 * GitHub.com or a GHES host from the web URL. `dotcom` replaces github.com's two
 * addresses (the tests' stand-in: ARC_REAPER_SETUP_GITHUB_COM="WEB API").
 */
export function githubPlace(webUrl: string, apiOverride?: string, dotcom?: { web: string; api: string }): GithubPlace {
  const web = trim(webUrl);
  if (web === GITHUB_COM || (dotcom && web === trim(dotcom.web))) {
    return { web: dotcom ? trim(dotcom.web) : GITHUB_COM, api: trim(apiOverride ?? dotcom?.api ?? "https://api.github.com"), ghes: false };
  }
  return { web, api: trim(apiOverride ?? `${web}/api/v3`), ghes: true };
}

/** The page that takes the manifest form: an organization's, or the signed-in user's. */
export function newAppUrl(place: GithubPlace, accountType: "org" | "user", org: string, state: string): string {
  const path = accountType === "org" ? `/organizations/${encodeURIComponent(org)}/settings/apps/new` : "/settings/apps/new";
  return `${place.web}${path}?state=${encodeURIComponent(state)}`;
}

export function conversionUrl(place: GithubPlace, code: string): string {
  return `${place.api}/app-manifests/${encodeURIComponent(code)}/conversions`;
}

export function installUrl(place: GithubPlace, slug: string): string {
  return `${place.web}/${place.ghes ? "github-apps" : "apps"}/${encodeURIComponent(slug)}/installations/new`;
}
