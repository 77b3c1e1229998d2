// GitHub's web half of the App manifest flow, as a browser sees it: the
// new-App page takes a form with `manifest` (for an organization at
// /organizations/ORG/settings/apps/new, for the signed-in user at
// /settings/apps/new, each with an optional ?state=), shows the App, and on
// "Create GitHub App" sends the browser to the manifest's redirect_url with a
// one-hour code and the state it was given. The install page answers too.
import { randomBytes } from "node:crypto";
import { addManifestCode } from "./manifest.ts";
import type { Tenant } from "./store.ts";

export type WebAnswer = { status: number; headers: Record<string, string>; html: string };

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const html = (status: number, title: string, body: string, headers: Record<string, string> = {}): WebAnswer => ({
  status,
  headers: { "content-type": "text/html; charset=utf-8", ...headers },
  html: `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${esc(title)} · GitHub</title></head><body><h1>${esc(title)}</h1>${body}</body></html>`,
});

const NEW_APP = /^(?:\/organizations\/([^/]+))?\/settings\/apps\/new$/;
const CONFIRM = /^(?:\/organizations\/([^/]+))?\/settings\/apps\/new\/confirm$/;
const INSTALL = /^\/(?:apps|github-apps)\/([^/]+)\/installations\/new$/;

function problems(m: Record<string, unknown>): string[] {
  const out: string[] = [];
  const hook = m["hook_attributes"] as Record<string, unknown> | undefined;
  if (typeof m["url"] !== "string" || !/^https?:\/\//.test(m["url"])) out.push("url must be an http(s) URL");
  if (typeof hook?.["url"] !== "string" || !/^https?:\/\//.test(hook["url"])) out.push("hook_attributes.url must be an http(s) URL");
  if (typeof m["redirect_url"] !== "string" || !/^https?:\/\//.test(m["redirect_url"])) out.push("redirect_url must be an http(s) URL");
  if (typeof m["name"] === "string" && m["name"].length > 34) out.push("name is too long (at most 34 characters)");
  return out;
}

/** The page for `path` (without the tenant's web prefix), or undefined when the web has none. */
export function answerWeb(tenant: Tenant, method: string, path: string, query: URLSearchParams, body: string, nowMs: number): WebAnswer | undefined {
  let m = NEW_APP.exec(path);
  if (m && method === "POST") {
    const raw = new URLSearchParams(body).get("manifest");
    let manifest: Record<string, unknown>;
    try {
      manifest = JSON.parse(raw ?? "") as Record<string, unknown>;
    } catch {
      return html(422, "Invalid GitHub App configuration", "<p>The manifest is not JSON.</p>");
    }
    const bad = problems(manifest);
    if (bad.length > 0) return html(422, "Invalid GitHub App configuration", `<ul>${bad.map((b) => `<li>${esc(b)}</li>`).join("")}</ul>`);
    const id = randomBytes(8).toString("hex");
    const owner = m[1] === undefined ? null : decodeURIComponent(m[1]);
    tenant.manifestForms.set(id, { owner, manifest, state: query.get("state") });
    const hook = (manifest["hook_attributes"] as Record<string, unknown>)["url"];
    return html(
      200,
      `Create GitHub App${owner ? ` for ${owner}` : ""}`,
      `<p>GitHub App name: <b id="app-name">${esc(String(manifest["name"] ?? ""))}</b></p><p>Webhook URL: <code id="hook-url">${esc(String(hook))}</code></p>` +
        `<form method="post" action="new/confirm"><input type="hidden" name="id" value="${id}"><button type="submit" id="create-app">Create GitHub App</button></form>`,
    );
  }
  m = CONFIRM.exec(path);
  if (m && method === "POST") {
    const id = new URLSearchParams(body).get("id") ?? "";
    const form = tenant.manifestForms.get(id);
    tenant.manifestForms.delete(id);
    if (!form) return html(422, "This form has expired", "<p>Start again.</p>");
    const code = randomBytes(10).toString("hex");
    addManifestCode(tenant, code, nowMs);
    tenant.manifestApps.push({ ...form, code });
    const back = new URL(String(form.manifest["redirect_url"]));
    back.searchParams.set("code", code);
    if (form.state !== null) back.searchParams.set("state", form.state);
    return { status: 302, headers: { location: back.toString(), "content-type": "text/html; charset=utf-8" }, html: "" };
  }
  m = INSTALL.exec(path);
  if (m && method === "GET") return html(200, `Install ${decodeURIComponent(m[1] ?? "")}`, "<p>Choose the repositories.</p>");
  return undefined;
}
