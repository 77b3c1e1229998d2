// Answers a Cloudflare Access (or any proxy) in front of the API server gives
// when the service token is missing or expired, injectable per tenant on list,
// read and delete: a 302 to an HTML login page (on cloudflareaccess.com, or on a
// second local "sink" server that records every request it gets, so a test can
// show that no credential followed the redirect), a 200 HTML page, a 200 `{}`,
// and a 404 HTML page. They come before authentication, as Access does.
//
// Control API (under the tenant's /__control/, admin token):
//   POST access/faults {answer, match?, times?} · GET access/faults · DELETE access/faults
//   GET access/sink (requests the sink received for this tenant) · DELETE access/sink
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ACCESS_TEAM_ORIGIN, PAGE_SECRET } from "./access-faults-client.ts";
import { isPlainObject } from "./crd-schema.ts";
import { badRequest, methodNotAllowed } from "./status.ts";

const ACCESS_ANSWERS = ["access-login", "access-login-local", "redirect-local", "html-200", "empty-object-200", "html-404"] as const;
/**
 * - access-login: 302 to https://arc-reaper-standin.cloudflareaccess.com/cdn-cgi/access/login/… (an HTML body)
 * - access-login-local: 302 to the sink's /cdn-cgi/access/login/… (the sink records and answers a login page)
 * - redirect-local: 302 to the sink at another path (a plain redirect, not Access)
 * - html-200: 200 with the HTML login page; empty-object-200: 200 `{}` (application/json); html-404: 404 HTML
 */
export type AccessAnswer = (typeof ACCESS_ANSWERS)[number];

export interface AccessFault {
  answer: AccessAnswer;
  /** Which API calls it answers; absent fields match all. `verb` is the RBAC verb: list, get, delete. */
  match?: { verb?: string; namespace?: string; name?: string };
  /** How many calls it answers; absent: all until cleared. */
  times?: number;
}

export interface AccessFaultState extends AccessFault {
  id: number;
  remaining: number | null;
}

/** A request the sink received. Header values are never kept; which headers came is. */
export interface SinkCall {
  method: string;
  path: string;
  headerNames: string[];
  /** Whether an Authorization or CF-Access-* header came with it. */
  credentials: boolean;
}

const loginPage = `<!DOCTYPE html><html><head><title>Sign in ・ Cloudflare Access</title></head><body>
<form method="post" action="/cdn-cgi/access/login"><input type="hidden" name="csrf" value="${PAGE_SECRET}">
<button>Sign in with your identity provider</button></form></body></html>`;
const notFoundPage = `<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><!-- ${PAGE_SECRET} --></body></html>`;

interface TenantAccess {
  faults: AccessFaultState[];
  sink: SinkCall[];
}

const MAX_TENANTS = 1000;
const MAX_SINK_CALLS = 1000;

export interface AccessFaults {
  /** Answers an API call when a fault matches it: writes the answer and returns its status. */
  answer(
    tenantId: string,
    call: { verb: string; namespace: string; name: string; path: string },
    req: IncomingMessage,
    res: ServerResponse,
  ): number | undefined;
  /** Serves access/… control routes; undefined for any other control path. */
  control(tenantId: string, method: string, path: string, text: string): { code: number; body: unknown; headers?: Record<string, string> } | undefined;
  close(): Promise<void>;
}

function parseFault(text: string): AccessFault {
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw badRequest("an access fault must be JSON");
  }
  if (!isPlainObject(body)) throw badRequest("an access fault must be a JSON object");
  for (const k of Object.keys(body)) if (!["answer", "match", "times"].includes(k)) throw badRequest(`unknown field ${JSON.stringify(k)} in access fault`);
  const answer = body["answer"];
  if (typeof answer !== "string" || !(ACCESS_ANSWERS as readonly string[]).includes(answer)) {
    throw badRequest(`access fault answer must be one of ${ACCESS_ANSWERS.join(", ")}`);
  }
  const fault: AccessFault = { answer: answer as AccessAnswer };
  const match = body["match"];
  if (match !== undefined) {
    if (!isPlainObject(match)) throw badRequest("access fault match must be an object");
    fault.match = {};
    for (const [k, v] of Object.entries(match)) {
      if (!["verb", "namespace", "name"].includes(k) || typeof v !== "string") throw badRequest(`access fault match.${k} is not a known string field`);
      fault.match[k as "verb" | "namespace" | "name"] = v;
    }
  }
  const times = body["times"];
  if (times !== undefined) {
    if (typeof times !== "number" || !Number.isInteger(times) || times < 1) throw badRequest("access fault times must be a positive integer");
    fault.times = times;
  }
  return fault;
}

export async function startAccessFaults(): Promise<AccessFaults> {
  const tenants = new Map<string, TenantAccess>();
  const of = (id: string): TenantAccess => {
    let t = tenants.get(id);
    if (!t) {
      if (tenants.size >= MAX_TENANTS) tenants.delete(tenants.keys().next().value ?? "");
      t = { faults: [], sink: [] };
      tenants.set(id, t);
    }
    return t;
  };
  let nextId = 1;

  // The sink: another origin a redirect can point to. It records and answers a login page.
  const sockets = new Set<Socket>();
  const sink = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const u = new URL(req.url ?? "/", "http://sink");
      const path = u.pathname;
      // Which tenant's redirect led here: the stand-in puts it in the query (the path stays Access's own).
      const tenantId = u.searchParams.get("standin_tenant") ?? "";
      const headerNames = Object.keys(req.headers).sort();
      const calls = of(tenantId).sink;
      if (calls.length < MAX_SINK_CALLS) {
        calls.push({
          method: req.method ?? "GET",
          path,
          headerNames,
          credentials: headerNames.some((h) => h === "authorization" || h.startsWith("cf-access-")),
        });
      }
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(loginPage);
    });
  });
  sink.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const address = sink.address();
  const sinkUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;

  const take = (t: TenantAccess, call: { verb: string; namespace: string; name: string }): AccessFaultState | undefined => {
    const fault = t.faults.find(
      (f) =>
        (f.match?.verb === undefined || f.match.verb === call.verb) &&
        (f.match?.namespace === undefined || f.match.namespace === call.namespace) &&
        (f.match?.name === undefined || f.match.name === call.name),
    );
    if (fault && fault.remaining !== null) {
      fault.remaining--;
      if (fault.remaining <= 0) t.faults.splice(t.faults.indexOf(fault), 1);
    }
    return fault;
  };

  const loginQuery = (path: string): string => `kid=${"9f".repeat(32)}&redirect_url=${encodeURIComponent(path)}&meta=eyJhbGciOiJSUzI1NiJ9.${PAGE_SECRET}`;

  return {
    answer(tenantId, call, req, res) {
      const t = tenants.get(tenantId);
      const fault = t ? take(t, call) : undefined;
      if (!fault) return undefined;
      const html = (code: number, body: string, headers: Record<string, string> = {}): number => {
        res.writeHead(code, { "Content-Type": "text/html; charset=utf-8", "Content-Length": Buffer.byteLength(body), ...headers });
        res.end(body);
        return code;
      };
      const host = req.headers.host ?? "kube.standin";
      switch (fault.answer) {
        case "access-login":
          return html(302, loginPage, { Location: `${ACCESS_TEAM_ORIGIN}/cdn-cgi/access/login/${host}?${loginQuery(call.path)}` });
        case "access-login-local":
          return html(302, loginPage, { Location: `${sinkUrl}/cdn-cgi/access/login/${host}?standin_tenant=${tenantId}&${loginQuery(call.path)}` });
        case "redirect-local":
          return html(302, loginPage, { Location: `${sinkUrl}/moved${call.path}?standin_tenant=${tenantId}` });
        case "html-200":
          return html(200, loginPage);
        case "html-404":
          return html(404, notFoundPage);
        case "empty-object-200":
          res.writeHead(200, { "Content-Type": "application/json", "Content-Length": 2 });
          res.end("{}");
          return 200;
      }
    },

    control(tenantId, method, path, text) {
      const route = `${method} ${path.replace(/\/+$/, "")}`;
      if (!path.startsWith("access/")) return undefined;
      const t = of(tenantId);
      switch (route) {
        case "POST access/faults": {
          const fault = parseFault(text);
          const state: AccessFaultState = { ...fault, id: nextId++, remaining: fault.times ?? null };
          t.faults.push(state);
          return { code: 201, body: state };
        }
        case "GET access/faults":
          return { code: 200, body: { faults: t.faults } };
        case "DELETE access/faults":
          t.faults = [];
          return { code: 200, body: {} };
        case "GET access/sink":
          return { code: 200, body: { url: sinkUrl, tenantQuery: `standin_tenant=${tenantId}`, calls: t.sink } };
        case "DELETE access/sink":
          t.sink = [];
          return { code: 200, body: {} };
      }
      throw methodNotAllowed();
    },

    close: async () => {
      const closed = new Promise<void>((resolve) => sink.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
