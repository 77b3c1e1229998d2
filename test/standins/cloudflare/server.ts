// A stand-in for the part of Cloudflare's API that `wrangler deploy` and
// `wrangler secret bulk|list` use, reached through wrangler's own
// CLOUDFLARE_API_BASE_URL (with dummy CLOUDFLARE_API_TOKEN and
// CLOUDFLARE_ACCOUNT_ID). It keeps one account: its workers.dev subdomain and
// its Workers, each with what the last upload carried (bindings, migrations,
// cron schedules) and its secrets, so that tests can assert what arrived.
// Answers use Cloudflare's envelope ({success, errors, messages, result}).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

interface StandinScript {
  name: string;
  /** The upload's metadata part, as sent (bindings, migrations, compatibility date, ...). */
  metadata: Record<string, unknown>;
  /** Names of the module parts uploaded. */
  modules: string[];
  migrationTag: string | null;
  /** Every Durable Object migration an upload carried, in order (a later upload of the same tag carries none). */
  migrations: unknown[];
  /** Secrets as the last PATCH left them: name to value. */
  secrets: Map<string, string>;
  schedules: string[];
  workersDev: boolean;
  uploads: number;
}

interface CloudflareCall {
  method: string;
  path: string;
  status: number;
}

export interface CloudflareStandin {
  /** Give this to wrangler as CLOUDFLARE_API_BASE_URL. */
  apiBaseUrl: string;
  accountId: string;
  subdomain: string;
  scripts: Map<string, StandinScript>;
  calls: CloudflareCall[];
  /** Requests no route answered (a newer wrangler may ask for more). */
  unknown: string[];
  close(): Promise<void>;
}

type Answer = { status: number; result: unknown; errors?: { code: number; message: string }[] };

const ok = (result: unknown, status = 200): Answer => ({ status, result });
const fail = (status: number, code: number, message: string): Answer => ({ status, result: null, errors: [{ code, message }] });
const versionId = (script: StandinScript) => `00000000-0000-4000-8000-${String(script.uploads).padStart(12, "0")}`;
const scriptNotFound = () => fail(404, 10007, "This Worker does not exist on your account.");

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

async function upload(script: StandinScript, contentType: string, body: Buffer): Promise<void> {
  const form = await new Response(new Uint8Array(body), { headers: { "content-type": contentType } }).formData();
  const modules: string[] = [];
  for (const [name, value] of form.entries()) {
    if (name === "metadata") script.metadata = JSON.parse(typeof value === "string" ? value : await value.text()) as Record<string, unknown>;
    else modules.push(name);
  }
  script.modules = modules;
  script.uploads += 1;
  const migrations = script.metadata["migrations"] as { new_tag?: string } | undefined;
  if (migrations?.new_tag) {
    script.migrationTag = migrations.new_tag;
    script.migrations.push(migrations);
  }
  // Secrets are kept across uploads, as Cloudflare keeps them (bindings of type secret_text are not sent).
}

export async function startCloudflareStandin(opts: { accountId?: string; subdomain?: string } = {}): Promise<CloudflareStandin> {
  const accountId = opts.accountId ?? "0123456789abcdef0123456789abcdef";
  const subdomain = opts.subdomain ?? "octo-org";
  const scripts = new Map<string, StandinScript>();
  const calls: CloudflareCall[] = [];
  const unknown: string[] = [];
  const base = "/client/v4";
  const account = `${base}/accounts/${accountId}`;

  const newScript = (name: string): StandinScript => ({
    name,
    metadata: {},
    modules: [],
    migrationTag: null,
    migrations: [],
    secrets: new Map(),
    schedules: [],
    workersDev: false,
    uploads: 0,
  });

  async function route(method: string, path: string, contentType: string, body: Buffer): Promise<Answer> {
    if (path === `${base}/user/tokens/verify`) return ok({ id: "token", status: "active" });
    if (path === `${base}/memberships`) return ok([{ account: { id: accountId, name: "octo-org" } }]);
    if (path === `${base}/accounts`) return ok([{ id: accountId, name: "octo-org" }]);
    if (path === `${account}/workers/subdomain` && method === "GET") return ok({ subdomain });
    let m = /^\/workers\/services\/([^/]+)$/.exec(path.slice(account.length));
    if (path.startsWith(account) && m && method === "GET") {
      const script = scripts.get(decodeURIComponent(m[1] ?? ""));
      if (!script) return fail(404, 10090, "workers.api.error.service_not_found");
      return ok({
        id: script.name,
        default_environment: {
          environment: "production",
          script: {
            id: script.name,
            tag: "t",
            etag: "e",
            handlers: ["fetch", "scheduled"],
            migration_tag: script.migrationTag,
            last_deployed_from: "wrangler",
          },
        },
      });
    }
    m = /^\/workers\/workers\/([^/]+)$/.exec(path.slice(account.length));
    if (path.startsWith(account) && m && method === "GET") {
      const script = scripts.get(decodeURIComponent(m[1] ?? ""));
      if (!script) return scriptNotFound();
      return ok({ id: script.name, name: script.name, subdomain: { enabled: script.workersDev, previews_enabled: script.workersDev } });
    }
    m = /^\/workers\/scripts\/([^/]+)(\/.*)?$/.exec(path.slice(account.length));
    if (!path.startsWith(account) || !m) return fail(404, 7003, `No route for that URI: ${method} ${path}`);
    const name = decodeURIComponent(m[1] ?? "");
    const rest = m[2] ?? "";
    const script = scripts.get(name);
    if (rest === "" && method === "PUT") {
      const s = script ?? newScript(name);
      await upload(s, contentType, body);
      scripts.set(name, s);
      return ok({
        id: name,
        etag: "e",
        handlers: ["fetch", "scheduled"],
        modified_on: new Date().toISOString(),
        created_on: new Date().toISOString(),
        startup_time_ms: 1,
      });
    }
    if (!script) return scriptNotFound();
    // A Worker that exists is updated through the versions API: a version, then a deployment of it at 100%.
    if (rest === "/versions" && method === "POST") {
      await upload(script, contentType, body);
      return ok({
        id: versionId(script),
        number: script.uploads,
        resources: { script: { etag: "e", handlers: ["fetch", "scheduled"] }, bindings: script.metadata["bindings"] ?? [] },
        startup_time_ms: 1,
      });
    }
    if (rest === "/deployments" && method === "POST")
      return ok({ id: versionId(script), source: "wrangler", strategy: "percentage", versions: [{ version_id: versionId(script), percentage: 100 }] });
    if (rest === "/script-settings" && (method === "PATCH" || method === "GET"))
      return ok({ logpush: false, tail_consumers: [], observability: script.metadata["observability"] ?? null, tags: [] });
    if (rest === "/secrets" && method === "GET") return ok([...script.secrets.keys()].map((n) => ({ name: n, type: "secret_text" })));
    if (rest === "/secrets-bulk" && method === "PATCH") {
      const patch = JSON.parse(body.toString("utf8")) as { secrets: Record<string, { name: string; text: string } | null> };
      for (const [key, value] of Object.entries(patch.secrets)) {
        if (value === null) script.secrets.delete(key);
        else script.secrets.set(key, value.text);
      }
      return ok({});
    }
    if (rest === "/deployments" && method === "GET") {
      const id = versionId(script);
      return ok({
        deployments: [
          {
            id,
            source: "wrangler",
            strategy: "percentage",
            author_email: "setup@example.invalid",
            created_on: new Date().toISOString(),
            versions: [{ version_id: id, percentage: 100 }],
          },
        ],
      });
    }
    const version = /^\/versions\/([^/]+)$/.exec(rest);
    if (version && method === "GET") {
      return ok({
        id: version[1],
        number: script.uploads,
        metadata: { source: "wrangler", created_on: new Date().toISOString(), modified_on: new Date().toISOString(), author_email: "setup@example.invalid" },
        annotations: {},
        resources: {
          bindings: script.metadata["bindings"] ?? [],
          script: { etag: "e", handlers: ["fetch", "scheduled"] },
          script_runtime: { compatibility_date: script.metadata["compatibility_date"], compatibility_flags: script.metadata["compatibility_flags"] },
        },
      });
    }
    if (rest === "/settings" && method === "GET")
      return ok({
        bindings: script.metadata["bindings"] ?? [],
        compatibility_date: script.metadata["compatibility_date"],
        compatibility_flags: script.metadata["compatibility_flags"] ?? [],
        logpush: false,
        observability: script.metadata["observability"],
        tags: [],
        tail_consumers: [],
      });
    if (rest === "/schedules" && method === "PUT") {
      script.schedules = (JSON.parse(body.toString("utf8")) as { cron: string }[]).map((s) => s.cron);
      return ok({ schedules: script.schedules.map((cron) => ({ cron })) });
    }
    if (rest === "/schedules" && method === "GET") return ok({ schedules: script.schedules.map((cron) => ({ cron })) });
    if (rest === "/subdomain" && method === "GET") return ok({ enabled: script.workersDev, previews_enabled: script.workersDev });
    if (rest === "/subdomain" && method === "POST") {
      script.workersDev = (JSON.parse(body.toString("utf8")) as { enabled: boolean }).enabled;
      return ok({ enabled: script.workersDev, previews_enabled: script.workersDev });
    }
    return fail(404, 7003, `No route for that URI: ${method} ${path}`);
  }

  const sockets = new Set<Socket>();
  const server = createServer((req, res: ServerResponse) => {
    const method = (req.method ?? "GET").toUpperCase();
    const path = new URL(req.url ?? "/", "http://x").pathname;
    readBody(req)
      .then((body) => route(method, path, String(req.headers["content-type"] ?? ""), body))
      .catch((e: unknown): Answer => fail(500, 10000, e instanceof Error ? e.message : String(e)))
      .then((answer) => {
        calls.push({ method, path, status: answer.status });
        if (answer.errors?.[0]?.code === 7003) unknown.push(`${method} ${path}`);
        const text = JSON.stringify({ success: answer.status < 400, errors: answer.errors ?? [], messages: [], result: answer.result });
        res.writeHead(answer.status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.end(text);
      });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    apiBaseUrl: `http://127.0.0.1:${port}${base}`,
    accountId,
    subdomain,
    scripts,
    calls,
    unknown,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
