// GitHub's App manifest flow, its API half: POST /app-manifests/{code}/conversions
// (no authentication; the code is the secret, single use, valid one hour) answers
// the new App's id, slug, html_url, pem and webhook_secret. The browser half (the
// form GitHub shows) is not modelled: a test seeds a code through the control API.
import { randomBytes } from "node:crypto";
import { errorAnswer, type ApiAnswer } from "./api.ts";
import { GHES_API_PREFIX } from "./ghes-host.ts";
import type { Tenant } from "./store.ts";

const DOC = "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest";
const CODE_LIFETIME_MS = 3600_000;
const PATH = /^\/app-manifests\/([^/]+)\/conversions$/;

/** A conversion answer when `path` is the conversions endpoint; undefined for every other path. */
export function answerManifestConversion(tenant: Tenant, method: string, path: string, pem: string, nowMs: number): ApiAnswer | undefined {
  const m = PATH.exec(path);
  if (!m) return undefined;
  if (method !== "POST") return errorAnswer(404, "Not Found", DOC);
  const code = decodeURIComponent(m[1] ?? "");
  const expires = tenant.manifestCodes.get(code);
  tenant.manifestCodes.delete(code);
  if (expires === undefined || expires <= nowMs) return errorAnswer(404, "Not Found", DOC);
  // An App made through the web form (web.ts) answers with its manifest's name, owner and webhook.
  const made = tenant.manifestApps.find((a) => a.code === code);
  const slug = `arc-reaper-${tenant.appId}`;
  // GitHub.com shows an App at https://github.com/apps/SLUG, a GHES host at https://HOST/github-apps/SLUG.
  const htmlUrl = tenant.ghes ? `${tenant.baseUrl.slice(0, -GHES_API_PREFIX.length)}/github-apps/${slug}` : `https://github.com/apps/${slug}`;
  const at = new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    status: 201,
    headers: {},
    body: {
      id: tenant.appId,
      slug,
      node_id: `A_kwDO${Buffer.from(String(tenant.appId)).toString("base64url")}`,
      owner: made?.owner === null ? { login: "octocat", id: 2, type: "User" } : { login: made?.owner ?? "octo-org", id: 1, type: "Organization" },
      name: typeof made?.manifest["name"] === "string" ? made.manifest["name"] : "arc-reaper",
      description: "",
      external_url: "https://arc-reaper.example.invalid",
      html_url: htmlUrl,
      created_at: at,
      updated_at: at,
      permissions: { actions: "read", metadata: "read" },
      events: ["workflow_job", "workflow_run"],
      client_id: `Iv23${randomBytes(8).toString("hex")}`,
      client_secret: randomBytes(20).toString("hex"),
      webhook_secret: randomBytes(20).toString("hex"),
      pem,
    },
  };
}

export function addManifestCode(tenant: Tenant, code: unknown, nowMs: number): { code: string } {
  if (typeof code !== "string" || !/^[A-Za-z0-9_-]{1,100}$/.test(code)) throw new Error("code must be 1 to 100 letters, digits, - or _");
  tenant.manifestCodes.set(code, nowMs + CODE_LIFETIME_MS);
  return { code };
}
