// A stand-in for api.github.com, run in Node for the tests: multi-tenant so test
// files can run in parallel, each tenant being one GitHub App with its own id,
// installations, runs, jobs, webhook deliveries, faults and rate-limit budget.
// API paths live under /t/{tenant}/ (like GHES's /api/v3), control paths under
// /t/{tenant}/__control/.
import { createHash, generateKeyPair, randomBytes, type KeyObject } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { errorAnswer, handleApi, installationOfToken, rateLimitExceededMessage, type ApiAnswer, type Auth } from "./api.ts";
import { handleControl } from "./control-routes.ts";
import { startGhesHost, type GhesHost } from "./ghes-host.ts";
import { answerManifestConversion } from "./manifest.ts";
import { answerWeb, type WebAnswer } from "./web.ts";
import { toWireJson, type WireJson } from "./json.ts";
import { looksLikeJwt } from "./jwt.ts";
import { newTenant, rateLimitState, StandinError, type ActiveFault, type Tenant } from "./store.ts";
import type { CallRecord, TenantInfo } from "./types.ts";

export type GithubStandin = { url: string; close(): Promise<void> };

/** Delivery ids are above 2^53 (9007199254740992), as GitHub's now are; the first
 * one already changes when read through a double (it reads back as ...930). */
const FIRST_DELIVERY_ID = 90071992547409931n;

function classifyAuth(header: string | undefined): Auth {
  const match = /^(?:bearer|token)\s+(\S+)\s*$/i.exec(header ?? "");
  const token = match?.[1];
  if (token === undefined) return { kind: "none" };
  return { kind: looksLikeJwt(token) ? "jwt" : "installation", token };
}

function requestId(): string {
  const hex = (bytes: number) => randomBytes(bytes).toString("hex").toUpperCase();
  return `${hex(2)}:${hex(2)}:${hex(4)}:${hex(4)}:${hex(4)}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** A weak entity tag of the body as this token reads it. */
function entityTag(auth: { kind: string; token?: string }, text: string): string {
  return `W/"${createHash("sha256")
    .update(`${auth.token ?? ""}\n${text}`)
    .digest("hex")
    .slice(0, 32)}"`;
}

/** Whether an If-None-Match header names the tag (weak comparison, as GitHub reads it; "*" matches any). */
function matchesNoneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = (Array.isArray(header) ? header.join(",") : header).split(",").map((t) => t.trim().replace(/^W\//, ""));
  return tags.includes("*") || tags.includes(etag.replace(/^W\//, ""));
}

function send(res: ServerResponse, status: number, text: string, headers: Record<string, string>): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

const SERVER_ERRORS: Record<number, string> = {
  500: "Server Error",
  502: "Server Error",
  503: "Service Unavailable",
  504: "We couldn't respond to your request in time. Sorry about that. Please try resubmitting your request and contact us if the problem persists.",
};
const CLIENT_ERRORS: Record<number, string> = {
  401: "Bad credentials",
  403: "Resource not accessible by integration",
  404: "Not Found",
  409: "Conflict",
  422: "Validation Failed",
};
const SECONDARY_LIMIT =
  "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ";

function takeFault(tenant: Tenant, method: string, pathWithQuery: string): ActiveFault | undefined {
  const fault = tenant.faults.find(
    (f) =>
      f.remaining > 0 &&
      (f.match?.method === undefined || f.match.method.toUpperCase() === method) &&
      (f.match?.pathIncludes === undefined || pathWithQuery.includes(f.match.pathIncludes)),
  );
  if (fault) fault.remaining -= 1;
  return fault;
}

function faultAnswer(tenant: Tenant, fault: ActiveFault, status: number, auth: Auth, reqId: string, nowMs: number): ApiAnswer {
  const headers: Record<string, string> = {};
  if (fault.retryAfterSeconds !== undefined) headers["retry-after"] = String(Math.ceil(fault.retryAfterSeconds));
  const rateDoc = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api";
  if (fault.rateLimitResetInSeconds !== undefined) {
    const state = rateLimitState(tenant, nowMs);
    headers["x-ratelimit-remaining"] = "0";
    headers["x-ratelimit-used"] = String(state.limit);
    headers["x-ratelimit-reset"] = String(Math.floor(nowMs / 1000) + Math.ceil(fault.rateLimitResetInSeconds));
    const message = fault.message ?? rateLimitExceededMessage(tenant, installationOfToken(tenant, auth));
    return errorAnswer(status, message, rateDoc, headers);
  }
  if (status === 429 || (status === 403 && fault.retryAfterSeconds !== undefined)) {
    return errorAnswer(status, fault.message ?? `${SECONDARY_LIMIT}${reqId}.`, `${rateDoc}#about-secondary-rate-limits`, headers);
  }
  const message = fault.message ?? SERVER_ERRORS[status] ?? CLIENT_ERRORS[status] ?? "Error";
  return errorAnswer(status, message, "https://docs.github.com/rest", headers);
}

/** The newest GitHub Enterprise Server release line when this was written. */
const DEFAULT_GHES_VERSION = "3.19.0";

function ghesOptions(value: unknown): Tenant["ghes"] {
  if (value === undefined || value === null || value === false) return null;
  if (value === true) return { version: DEFAULT_GHES_VERSION, rateLimits: false };
  if (typeof value !== "object" || Array.isArray(value)) throw new StandinError(400, "ghes must be true or an object { version?, rateLimits? }");
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== "version" && k !== "rateLimits") throw new StandinError(400, `unknown field ${JSON.stringify(k)} in ghes`);
  if (o["version"] !== undefined && (typeof o["version"] !== "string" || !/^\d+\.\d+\.\d+$/.test(o["version"]))) {
    throw new StandinError(400, `ghes.version must be like "3.19.0", got ${JSON.stringify(o["version"])}`);
  }
  if (o["rateLimits"] !== undefined && typeof o["rateLimits"] !== "boolean") throw new StandinError(400, "ghes.rateLimits must be a boolean");
  return { version: typeof o["version"] === "string" ? o["version"] : DEFAULT_GHES_VERSION, rateLimits: o["rateLimits"] === true };
}

export async function startGithubStandin(opts: { port?: number } = {}): Promise<GithubStandin> {
  // One key pair per server: RSA generation is slow, and tenants differ by app id.
  const { privateKey, publicKey } = await new Promise<{ privateKey: KeyObject; publicKey: KeyObject }>((resolve, reject) =>
    generateKeyPair("rsa", { modulusLength: 2048 }, (error, publicKey, privateKey) => (error ? reject(error) : resolve({ publicKey, privateKey }))),
  );
  const keys = {
    publicKey,
    pkcs1: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
    pkcs8: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
  const tenants = new Map<string, Tenant>();
  let nextAppId = 1_000_001;
  let nextDeliveryId = FIRST_DELIVERY_ID;
  const apiContext = { publicKey: keys.publicKey, nextDeliveryId: () => nextDeliveryId++ };
  let url = "";

  // Delayed answers must not hold close() up: both the timers and the sockets are tracked.
  const sockets = new Set<Socket>();
  const pendingDelays = new Set<() => void>();
  let closing = false;
  const delay = (ms: number) =>
    new Promise<boolean>((resolve) => {
      const cancel = () => {
        clearTimeout(timer);
        pendingDelays.delete(cancel);
        resolve(false);
      };
      const timer = setTimeout(() => {
        pendingDelays.delete(cancel);
        resolve(!closing);
      }, ms);
      pendingDelays.add(cancel);
    });

  const ghesHosts: GhesHost[] = [];

  async function createTenant(body: string): Promise<TenantInfo> {
    let options: Record<string, unknown> = {};
    if (body.trim() !== "") {
      const parsed: unknown = JSON.parse(body);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) options = parsed as Record<string, unknown>;
    }
    const appId = typeof options.appId === "number" && Number.isSafeInteger(options.appId) ? options.appId : nextAppId++;
    const ghes = ghesOptions(options.ghes);
    // GHES has rate limits off by default: nothing to run out of.
    const rateLimit = typeof options.rateLimit === "number" ? options.rateLimit : ghes && !ghes.rateLimits ? Number.MAX_SAFE_INTEGER : 5000;
    const id = `${tenants.size + 1}${randomBytes(3).toString("hex")}`;
    const controlUrl = `${url}/t/${id}/__control`;
    if (!ghes) {
      tenants.set(id, newTenant(id, appId, `${url}/t/${id}`, rateLimit));
      return { id, baseUrl: `${url}/t/${id}`, controlUrl, webUrl: `${url}/t/${id}/web`, appId, privateKeyPkcs1: keys.pkcs1, privateKeyPkcs8: keys.pkcs8 };
    }
    let tenant: Tenant | undefined;
    const host = await startGhesHost(
      async (req, res, path, parsed) => {
        if (tenant) await answerApi(req, res, tenant, path, parsed.searchParams, parsed.search, await readBody(req));
      },
      (method, path) => tenant?.calls.push({ method, path, query: {}, auth: "none", status: 404, outsideApi: true }),
      sendError,
      async (req, res, path, parsed) =>
        tenant ? sendWeb(res, answerWeb(tenant, (req.method ?? "GET").toUpperCase(), path, parsed.searchParams, await readBody(req), Date.now())) : false,
    );
    ghesHosts.push(host);
    tenant = newTenant(id, appId, host.apiUrl, rateLimit, ghes);
    tenants.set(id, tenant);
    return { id, baseUrl: host.apiUrl, controlUrl, webUrl: host.url, appId, privateKeyPkcs1: keys.pkcs1, privateKeyPkcs8: keys.pkcs8 };
  }

  async function answerApi(
    req: IncomingMessage,
    res: ServerResponse,
    tenant: Tenant,
    path: string,
    query: URLSearchParams,
    search: string,
    body: string,
  ): Promise<void> {
    const method = (req.method ?? "GET").toUpperCase();
    const auth = classifyAuth(req.headers.authorization);
    const reqId = requestId();
    // Recorded on arrival (status 0 until answered) so a test sees calls it timed out on.
    const call: CallRecord = { method, path, query: Object.fromEntries(query), auth: auth.kind, status: 0 };
    tenant.calls.push(call);
    const fault = takeFault(tenant, method, `${path}${search}`);
    if (fault?.delayMs !== undefined && fault.delayMs > 0 && !(await delay(fault.delayMs))) return;
    if (fault?.status !== undefined && (fault.rawBody !== undefined || fault.location !== undefined)) {
      call.status = fault.status;
      const headers: Record<string, string> = { "x-github-request-id": reqId, "content-type": fault.contentType ?? "application/json; charset=utf-8" };
      if (fault.location !== undefined) headers.location = fault.location;
      send(res, fault.status, fault.rawBody ?? "", headers);
      return;
    }
    const nowMs = Date.now();
    const answer =
      fault?.status !== undefined
        ? faultAnswer(tenant, fault, fault.status, auth, reqId, nowMs)
        : (answerManifestConversion(tenant, method, path, keys.pkcs1, nowMs) ?? handleApi(tenant, { method, path, query, auth, body, nowMs }, apiContext));
    // GitHub's ETag on a GET's 200: weak, quoted, changing with the body and differing per token (ETags are
    // specific to the token: GitHub support in eclipse-csi/otterdog #201). No Last-Modified: GitHub sends none on
    // the Actions and installation endpoints served here. A match of If-None-Match is a 304 with no body that does
    // not spend the primary rate limit (the request made while correctly authorized).
    const text = toWireJson(answer.body);
    const etag = method === "GET" && answer.status === 200 ? entityTag(auth, text) : undefined;
    const notModified = etag !== undefined && matchesNoneMatch(req.headers["if-none-match"], etag);
    if (notModified) tenant.rate.used = Math.max(0, tenant.rate.used - 1);
    call.status = notModified ? 304 : answer.status;
    const rate = rateLimitState(tenant, nowMs);
    const rateHeaders: Record<string, string> =
      tenant.ghes && !tenant.ghes.rateLimits
        ? {}
        : {
            "x-ratelimit-limit": String(rate.limit),
            "x-ratelimit-remaining": String(rate.remaining),
            "x-ratelimit-reset": String(rate.reset),
            "x-ratelimit-used": String(rate.used),
            "x-ratelimit-resource": "core",
          };
    const common = {
      "x-github-request-id": reqId,
      "x-github-api-version-selected": "2022-11-28",
      ...(tenant.ghes ? { "x-github-enterprise-version": tenant.ghes.version } : {}),
      ...rateHeaders,
    };
    if (notModified) {
      if (!res.destroyed && !res.headersSent) res.writeHead(304, { ...common, etag }).end();
      return;
    }
    send(res, answer.status, text, {
      ...(etag === undefined ? {} : { etag }),
      "x-github-request-id": reqId,
      "x-github-api-version-selected": "2022-11-28",
      "x-github-media-type": "github.v3; format=json",
      ...(tenant.ghes ? { "x-github-enterprise-version": tenant.ghes.version } : {}),
      ...rateHeaders,
      ...answer.headers,
    });
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = new URL(req.url ?? "/", url);
    const body = await readBody(req);
    const method = (req.method ?? "GET").toUpperCase();
    if (parsed.pathname === "/__tenants" && method === "POST") {
      send(res, 201, JSON.stringify(await createTenant(body)), {});
      return;
    }
    const match = /^\/t\/([^/]+)(\/.*)?$/.exec(parsed.pathname);
    const tenant = match?.[1] === undefined ? undefined : tenants.get(match[1]);
    if (!match || !tenant) {
      send(res, 404, toWireJson(errorAnswer(404, "Not Found").body), { "x-github-request-id": requestId() });
      return;
    }
    const path = match[2] ?? "/";
    if (path.startsWith("/__control/")) {
      const answer = handleControl(tenant, method, path.slice("/__control".length), body, apiContext.nextDeliveryId);
      send(res, answer.status, JSON.stringify(answer.body), {});
      return;
    }
    if (!tenant.ghes && (path === "/web" || path.startsWith("/web/"))) {
      if (!sendWeb(res, answerWeb(tenant, method, path.slice("/web".length), parsed.searchParams, body, Date.now()))) {
        send(res, 404, "<!DOCTYPE html><title>Page not found · GitHub</title>", { "content-type": "text/html; charset=utf-8" });
      }
      return;
    }
    if (tenant.ghes) {
      // A GHES tenant's API is on its own host only, so a client must use GITHUB_API_URL as given.
      send(res, 404, toWireJson(errorAnswer(404, "Not Found").body), { "x-github-request-id": requestId() });
      return;
    }
    await answerApi(req, res, tenant, path, parsed.searchParams, parsed.search, body);
  }

  /** Sends a web page; false when there was none to send. */
  function sendWeb(res: ServerResponse, answer: WebAnswer | undefined): boolean {
    if (!answer) return false;
    if (!res.headersSent) {
      res.writeHead(answer.status, { ...answer.headers, "content-length": Buffer.byteLength(answer.html) });
      res.end(answer.html);
    }
    return true;
  }

  function sendError(res: ServerResponse, error: unknown): void {
    const status = error instanceof StandinError ? error.status : 500;
    const message = error instanceof Error ? error.message : String(error);
    if (status === 500) console.error("github stand-in:", error);
    const body: WireJson = { error: message };
    send(res, status, JSON.stringify(body), {});
  }

  const server = createServer((req, res) => {
    onRequest(req, res).catch((error: unknown) => sendError(res, error));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `http://127.0.0.1:${port}`;

  return {
    url,
    close: async () => {
      closing = true;
      for (const cancel of [...pendingDelays]) cancel();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await Promise.all([closed, ...ghesHosts.map((h) => h.close())]);
    },
  };
}
