// GitHub's manifest flow on this machine: a one-button page on 127.0.0.1 posts
// the manifest to GitHub; GitHub sends the browser back here with a code, which
// is exchanged at once (POST /app-manifests/{code}/conversions). The App's id,
// key and webhook secret are only ever in this process's memory.
// Any local process can reach a loopback port, and a web page can reach it by
// DNS rebinding: so everything lives under a random path secret (the page, and
// the redirect_url GitHub sends the browser back to), and a request whose Host
// is not exactly 127.0.0.1:PORT, or that lacks the secret, gets a bare 404.
import { randomBytes } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { conversionUrl, newAppUrl, type GithubPlace } from "./github-urls.ts";

export interface Conversion {
  id: number;
  slug: string;
  htmlUrl: string;
  pem: string;
  webhookSecret: string;
}

export interface ManifestFlow {
  /** The page to open in a browser: http://127.0.0.1:PORT/SECRET/. */
  url: string;
  /** The port, for an SSH port-forward line (the same port on both ends keeps the Host exact). */
  port: number;
  /** Settles when GitHub's code is exchanged (or the exchange failed). */
  done: Promise<Conversion>;
  close(): Promise<void>;
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function page(res: ServerResponse, status: number, title: string, body: string): void {
  const html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><meta name="viewport" content="width=device-width"><style>body{font:16px system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem}button{font-size:1.1rem;padding:.6rem 1.2rem}</style></head><body><h1>${esc(title)}</h1>${body}</body></html>`;
  res.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action *",
    "referrer-policy": "no-referrer",
  });
  res.end(html);
}

function parseConversion(value: unknown): Conversion {
  const o = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  if (typeof o["id"] !== "number" || typeof o["slug"] !== "string" || typeof o["pem"] !== "string" || typeof o["webhook_secret"] !== "string") {
    throw new Error("GitHub's answer to the code exchange lacks id, slug, pem or webhook_secret");
  }
  return { id: o["id"], slug: o["slug"], htmlUrl: typeof o["html_url"] === "string" ? o["html_url"] : "", pem: o["pem"], webhookSecret: o["webhook_secret"] };
}

export async function startManifestFlow(o: {
  place: GithubPlace;
  accountType: "org" | "user";
  org: string;
  manifest: Record<string, unknown>;
}): Promise<ManifestFlow> {
  const state = randomBytes(16).toString("hex");
  const secret = randomBytes(24).toString("base64url");
  let settle: { resolve: (c: Conversion) => void; reject: (e: Error) => void } | undefined;
  const done = new Promise<Conversion>((resolve, reject) => (settle = { resolve, reject }));
  let used = false;
  let base = "";
  let host = "";
  const server = createServer((req, res) => {
    const prefix = `/${secret}/`;
    if (req.headers.host !== host || !(req.url ?? "").startsWith(prefix)) {
      res.writeHead(404, { "content-type": "text/plain", "cache-control": "no-store" });
      res.end();
      return;
    }
    const url = new URL(`/${(req.url ?? "").slice(prefix.length)}`, base);
    if (req.method === "GET" && url.pathname === "/") {
      const manifest = JSON.stringify({ ...o.manifest, redirect_url: `${base}${prefix}created` });
      const action = newAppUrl(o.place, o.accountType, o.org, state);
      page(
        res,
        200,
        "Create arc-reaper's GitHub App",
        `<p>This posts arc-reaper's App manifest to <b>${esc(o.place.web)}</b> for <b>${esc(o.org)}</b>. GitHub shows the App; choose <b>Create GitHub App</b>, and GitHub brings you back here.</p><form method="post" action="${esc(action)}"><input type="hidden" name="manifest" value="${esc(manifest)}"><button type="submit" id="create">Create the GitHub App</button></form>`,
      );
      return;
    }
    if (req.method === "GET" && url.pathname === "/created") {
      const code = url.searchParams.get("code") ?? "";
      if (url.searchParams.get("state") !== state || !/^[\w-]{1,200}$/.test(code)) {
        page(res, 400, "Not this setup's App", "<p>This answer does not belong to the page setup served (its state differs): nothing was done.</p>");
        return;
      }
      if (used) {
        page(res, 409, "Already done", "<p>This code was already exchanged: go back to the terminal.</p>");
        return;
      }
      used = true;
      fetch(conversionUrl(o.place, code), {
        method: "POST",
        headers: { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28", "user-agent": "arc-reaper-setup" },
        signal: AbortSignal.timeout(30_000),
      })
        .then(async (r) => {
          const text = await r.text();
          if (r.status !== 201) throw new Error(`GitHub answered ${r.status} to the code exchange: ${text.slice(0, 300)}`);
          return parseConversion(JSON.parse(text));
        })
        .then((c) => {
          page(
            res,
            200,
            "The App is made",
            `<p>GitHub App <b>${esc(c.slug)}</b> (id ${c.id}) exists. Its key and webhook secret go straight to the Worker: back to the terminal.</p>`,
          );
          settle?.resolve(c);
        })
        .catch((e: unknown) => {
          const error = e instanceof Error ? e : new Error(String(e));
          page(res, 502, "The code exchange failed", `<p>${esc(error.message)}</p>`);
          settle?.reject(error);
        });
      return;
    }
    page(res, 404, "Not found", "<p>Nothing here.</p>");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  host = `127.0.0.1:${port}`;
  base = `http://${host}`;
  return {
    url: `${base}/${secret}/`,
    port,
    done,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
