// A stand-in kube-apiserver for the EphemeralRunner resource, for tests: real
// HTTP, JSON and Status bodies, bearer-token auth with RBAC, and a control API
// to seed objects, play ARC's controller and inject faults. Each test makes
// its own tenant (POST /__tenants) and talks to it under /t/{id}.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { startAccessFaults, type AccessFaults } from "./access-faults.ts";
import { ARC_VERSIONS, DEFAULT_ARC_VERSION, isArcVersion } from "./arc-versions.ts";
import { ephemeralRunnerCrd, isPlainObject } from "./crd-schema.ts";
import { checkBinding, denied, isAllowed, requestInfo, type RequestInfo } from "./rbac.ts";
import {
  badRequest,
  internalError,
  invalid,
  KubeError,
  methodNotAllowed,
  notFound,
  pathNotFound,
  statusForCode,
  tooLarge,
  unauthorized,
  type FieldError,
} from "./status.ts";
import { Tenant, type DeleteOptions, type WriteMode } from "./store.ts";
import { MANGLES, mangled, type Mangle } from "./proxy-mangle.ts";
import { notAcceptable, printerColumns, tableOf, wantedShape } from "./table.ts";
import type { Json, JsonObject, KubeCall, KubeFault, KubeTenantInfo, ObjectRef, RbacBinding, ServiceAccountSpec } from "./types.ts";

const MAX_BODY_BYTES = 3 * 1024 * 1024; // the real API server's request size limit
const MAX_TENANTS = 1000;
const MAX_DELAY_MS = 120_000;
const MAX_LOGGED_BODY = 16 * 1024;

interface Answer {
  code: number;
  body: unknown;
  headers?: Record<string, string | string[]>;
  /** Runs after the answer is sent (e.g. autoFinalize removing a deleted object). */
  after?: () => void;
  /** A watch: streams its own 200 answer (watch.ts) instead of `body`. */
  stream?: (res: ServerResponse) => void;
}

type Auth = { kind: "admin"; user: string } | { kind: "serviceaccount"; user: string; bindings: RbacBinding[] } | { kind: "missing" | "invalid"; user: null };

function send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(code, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-cache, private",
    "Audit-Id": crypto.randomUUID(),
    ...headers,
  });
  res.end(text);
}

function sendError(res: ServerResponse, err: unknown): number {
  const e = err instanceof KubeError ? err : internalError(err instanceof Error ? err.message : String(err));
  send(res, e.code, e.status, e.headers);
  return e.code;
}

async function readBody(req: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES) over = true;
    else chunks.push(b);
  }
  return { text: over ? "" : Buffer.concat(chunks).toString("utf8"), tooLarge: over };
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw badRequest(`${what}: json parse error: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function mediaType(req: IncomingMessage): string {
  return (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function authenticate(tenant: Tenant, header: string | undefined): Auth {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (!m) return { kind: header ? "invalid" : "missing", user: null };
  const token = m[1] ?? "";
  if (token === tenant.adminToken) return { kind: "admin", user: "admin" };
  const sa = tenant.serviceAccounts.get(token);
  if (sa) return { kind: "serviceaccount", user: sa.user, bindings: sa.bindings };
  return { kind: "invalid", user: null };
}

/** Cancellable waits, so close() never waits for a delayed answer. */
class Delays {
  private readonly pending = new Set<() => void>();

  wait(ms: number, res: ServerResponse): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.pending.delete(cancel);
        res.off("close", onClose);
        resolve(ok);
      };
      const cancel = (): void => done(false);
      // The client gave up (e.g. its timeout fired): the delayed request is dropped, not applied.
      const onClose = (): void => {
        if (!res.writableEnded) done(false);
      };
      const timer = setTimeout(() => done(true), ms);
      this.pending.add(cancel);
      res.on("close", onClose);
    });
  }

  cancelAll(): void {
    for (const cancel of [...this.pending]) cancel();
  }
}

// --- the Kubernetes API ------------------------------------------------------

function writeMode(q: URLSearchParams): WriteMode {
  const v = q.get("fieldValidation") ?? "";
  if (v === "") return "Warn";
  if (v === "Strict" || v === "Warn" || v === "Ignore") return v;
  throw badRequest(`fieldValidation parameter unsupported: ${JSON.stringify(v)}`);
}

function dryRunOf(values: unknown): boolean {
  const list = Array.isArray(values) ? values : [];
  for (const v of list) {
    if (v !== "All") {
      throw invalid("DeleteOptions", "meta.k8s.io", "", [{ type: "NotSupported", field: "dryRun", value: v, supported: ["All"] }]);
    }
  }
  return list.length > 0;
}

function deleteOptions(text: string, q: URLSearchParams): DeleteOptions {
  let raw: Record<string, unknown>;
  if (text.trim() !== "") {
    const parsed = parseJson(text, "couldn't get version/kind");
    if (!isPlainObject(parsed)) throw badRequest("DeleteOptions must be a JSON object");
    raw = parsed;
  } else {
    // Query parameters count only when there is no body, as in the real handler.
    raw = {};
    const pp = q.get("propagationPolicy");
    if (pp !== null) raw["propagationPolicy"] = pp;
    const od = q.get("orphanDependents");
    if (od !== null) raw["orphanDependents"] = od === "true";
    const dr = q.getAll("dryRun");
    if (dr.length > 0) raw["dryRun"] = dr;
  }
  const typeErr = (field: string, type: string): KubeError =>
    badRequest(`json: cannot unmarshal ${typeof raw[field]} into Go struct field DeleteOptions.${field} of type ${type}`);
  const kind = raw["kind"];
  if (kind !== undefined && kind !== "DeleteOptions") throw badRequest(`unexpected kind ${JSON.stringify(kind)} in DeleteOptions`);
  const pre = raw["preconditions"];
  let uid: string | undefined;
  let resourceVersion: string | undefined;
  if (pre !== undefined && pre !== null) {
    if (!isPlainObject(pre)) throw typeErr("preconditions", "v1.Preconditions");
    if (pre["uid"] !== undefined && pre["uid"] !== null) {
      if (typeof pre["uid"] !== "string") throw badRequest("json: cannot unmarshal into Go struct field Preconditions.preconditions.uid of type types.UID");
      uid = pre["uid"];
    }
    if (pre["resourceVersion"] !== undefined && pre["resourceVersion"] !== null) {
      if (typeof pre["resourceVersion"] !== "string")
        throw badRequest("json: cannot unmarshal into Go struct field Preconditions.preconditions.resourceVersion of type string");
      resourceVersion = pre["resourceVersion"];
    }
  }
  const policy = raw["propagationPolicy"];
  if (policy !== undefined && policy !== null && typeof policy !== "string") throw typeErr("propagationPolicy", "v1.DeletionPropagation");
  const orphan = raw["orphanDependents"];
  if (orphan !== undefined && orphan !== null && typeof orphan !== "boolean") throw typeErr("orphanDependents", "bool");
  const grace = raw["gracePeriodSeconds"];
  if (grace !== undefined && grace !== null && !(typeof grace === "number" && Number.isInteger(grace))) throw typeErr("gracePeriodSeconds", "int64");
  const errs: FieldError[] = [];
  if (typeof policy === "string" && !["Foreground", "Background", "Orphan"].includes(policy)) {
    errs.push({ type: "NotSupported", field: "propagationPolicy", value: policy, supported: ["Foreground", "Background", "Orphan", "nil"] });
  }
  if (typeof orphan === "boolean" && typeof policy === "string") {
    errs.push({ type: "Invalid", field: "propagationPolicy", value: policy, detail: "orphanDependents and deletionPropagation cannot be both set" });
  }
  if (errs.length > 0) throw invalid("DeleteOptions", "meta.k8s.io", "", errs);
  const opts: DeleteOptions = { dryRun: dryRunOf(raw["dryRun"]) };
  if (uid !== undefined) opts.uid = uid;
  if (resourceVersion !== undefined) opts.resourceVersion = resourceVersion;
  if (typeof policy === "string") opts.propagationPolicy = policy;
  if (typeof orphan === "boolean") opts.orphanDependents = orphan;
  return opts;
}

function warningHeaders(warnings: string[]): Record<string, string[]> {
  return warnings.length > 0 ? { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) } : {};
}

const discovery = {
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion: "actions.github.com/v1alpha1",
  resources: [
    {
      name: "ephemeralrunners",
      singularName: "ephemeralrunner",
      namespaced: true,
      kind: "EphemeralRunner",
      verbs: ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
    },
    { name: "ephemeralrunners/status", singularName: "", namespaced: true, kind: "EphemeralRunner", verbs: ["get", "patch", "update"] },
  ],
};

/** A list or get answered as the client's Accept asks: a Table (table.ts), a 406 when Tables are refused and nothing else is accepted, or as it is. */
function shaped(tenant: Tenant, accept: string | undefined, q: URLSearchParams, body: JsonObject): Answer {
  const wanted = wantedShape(accept);
  if (!wanted.table) return { code: 200, body };
  if (tenant.refuseTables) {
    if (wanted.orPlain) return { code: 200, body };
    throw notAcceptable();
  }
  const columns = printerColumns(tenant.arcVersion, tenant.tableColumnsWithout);
  if (Array.isArray(body["items"])) {
    const { metadata } = body;
    return { code: 200, body: tableOf(body["items"] as JsonObject[], (metadata ?? {}) as JsonObject, columns, q) };
  }
  const meta = (body["metadata"] ?? {}) as JsonObject;
  return { code: 200, body: tableOf([body], { resourceVersion: meta["resourceVersion"] ?? "" }, columns, q) };
}

function serveApi(
  tenant: Tenant,
  auth: Auth,
  info: RequestInfo,
  method: string,
  q: URLSearchParams,
  text: string,
  contentType: string,
  accept?: string,
): Answer {
  if (auth.user === null) throw unauthorized();
  if (!info.resourceRequest) {
    if (method === "GET" && info.path.replace(/\/$/, "") === "/apis/actions.github.com/v1alpha1") return { code: 200, body: discovery };
    throw pathNotFound();
  }
  if (auth.kind === "serviceaccount" && !isAllowed(auth.bindings, info)) throw denied(auth.user, info);
  if (info.verb === "watch") {
    if (info.apiGroup !== "actions.github.com" || info.apiVersion !== "v1alpha1" || info.resource !== "ephemeralrunners" || info.subresource !== "") {
      throw badRequest("the stand-in serves watch requests for ephemeralrunners only");
    }
    return { code: 200, body: null, stream: tenant.objects.prepareWatch(info.namespace, q) };
  }
  const dryRunQuery = (): boolean => {
    const v = q.getAll("dryRun");
    if (v.some((x) => x !== "All")) throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}`);
    return v.length > 0;
  };

  if (info.apiGroup === "actions.github.com" && info.apiVersion === "v1alpha1" && info.resource === "ephemeralrunners") {
    const ns = info.namespace;
    if (info.name === "") {
      if (method === "GET") return shaped(tenant, accept, q, tenant.list(ns, q));
      if (method === "POST" && ns !== "") {
        const r = tenant.create(ns, parseJson(text, "couldn't get version/kind"), writeMode(q), dryRunQuery());
        return { code: 201, body: r.object, headers: warningHeaders(r.warnings) };
      }
      throw methodNotAllowed();
    }
    if (ns === "") throw pathNotFound();
    if (info.subresource !== "" && info.subresource !== "status") throw pathNotFound();
    const sub = info.subresource === "status" ? "status" : "";
    switch (method) {
      case "GET":
        return shaped(tenant, accept, q, tenant.get(ns, info.name));
      case "PUT": {
        const r = tenant.update(ns, info.name, parseJson(text, "couldn't get version/kind"), sub, writeMode(q), dryRunQuery());
        return { code: 200, body: r.object, headers: warningHeaders(r.warnings) };
      }
      case "PATCH": {
        const r = tenant.patch(ns, info.name, contentType, parseJson(text, "error decoding patch"), sub, writeMode(q), dryRunQuery());
        return { code: 200, body: r.object, headers: warningHeaders(r.warnings) };
      }
      case "DELETE": {
        if (sub !== "") throw methodNotAllowed();
        const opts = deleteOptions(text, q);
        const r = tenant.delete(ns, info.name, opts);
        const name = info.name;
        const after = (): void => {
          if (!opts.dryRun) tenant.afterDelete(ns, name);
        };
        return { code: r.code, body: r.body, after };
      }
      default:
        throw methodNotAllowed();
    }
  }

  // The CRD the tenant's ARC version installed (kubectl get crd), so a test can see which one it talks to.
  if (info.apiGroup === "apiextensions.k8s.io" && info.apiVersion === "v1" && info.resource === "customresourcedefinitions" && info.namespace === "") {
    if (method !== "GET") throw methodNotAllowed();
    const crdName = "ephemeralrunners.actions.github.com";
    const crd = ephemeralRunnerCrd(tenant.arcVersion);
    if (info.name === "") {
      return {
        code: 200,
        body: {
          kind: "CustomResourceDefinitionList",
          apiVersion: "apiextensions.k8s.io/v1",
          metadata: { resourceVersion: tenant.resourceVersion },
          items: [crd],
        },
      };
    }
    if (info.name !== crdName) throw notFound({ group: "apiextensions.k8s.io", resource: "customresourcedefinitions" }, info.name);
    return { code: 200, body: crd };
  }

  // The kube-system namespace, whose uid is the cluster's identity (distinct per tenant, as per cluster).
  if (info.apiGroup === "" && info.apiVersion === "v1" && info.resource === "namespaces" && info.name !== "" && info.subresource === "") {
    if (method !== "GET") throw methodNotAllowed();
    if (info.name !== "kube-system") throw notFound({ group: "", resource: "namespaces" }, info.name);
    return {
      code: 200,
      body: {
        kind: "Namespace",
        apiVersion: "v1",
        metadata: {
          name: "kube-system",
          uid: tenant.kubeSystemUid,
          resourceVersion: "4",
          creationTimestamp: "2026-01-01T00:00:00Z",
          labels: { "kubernetes.io/metadata.name": "kube-system" },
        },
        spec: { finalizers: ["kubernetes"] },
        status: { phase: "Active" },
      },
    };
  }

  // Core pods and secrets exist (empty), so an RBAC denial (403) differs from a wrong path (404).
  if (info.apiGroup === "" && info.apiVersion === "v1" && (info.resource === "pods" || info.resource === "secrets") && info.namespace !== "") {
    if (method !== "GET") throw methodNotAllowed();
    if (info.name !== "") throw notFound({ group: "", resource: info.resource }, info.name);
    const kind = info.resource === "pods" ? "PodList" : "SecretList";
    return { code: 200, body: { kind, apiVersion: "v1", metadata: { resourceVersion: tenant.resourceVersion }, items: [] } };
  }
  throw pathNotFound();
}

async function handleApi(
  tenant: Tenant,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  q: URLSearchParams,
  delays: Delays,
  access: AccessFaults,
): Promise<void> {
  const started = Date.now();
  const method = (req.method ?? "GET").toUpperCase();
  const { text, tooLarge: over } = await readBody(req);
  const contentType = mediaType(req);
  const auth = authenticate(tenant, req.headers.authorization);
  const info = requestInfo(method, path, q);
  const call: Omit<KubeCall, "seq"> = {
    time: new Date(started).toISOString(),
    method,
    path,
    query: Object.fromEntries(q),
    status: 0,
    user: auth.user,
    auth: auth.kind,
    durationMs: 0,
  };
  if (contentType) call.contentType = contentType;
  if (text !== "" && text.length <= MAX_LOGGED_BODY) {
    try {
      call.body = JSON.parse(text) as Json;
    } catch {
      call.body = text;
    }
  }
  const finish = (status: number): void => {
    call.status = status;
    call.durationMs = Date.now() - started;
    tenant.record(call);
  };

  // Access-style answers (access-faults.ts) come first: Access sits in front of the API server.
  const accessCode = access.answer(tenant.id, { verb: info.verb, namespace: info.namespace, name: info.name, path }, req, res);
  if (accessCode !== undefined) return finish(accessCode);

  const fault = tenant.takeFault(method, path, info.verb);
  if (fault) {
    call.faultId = fault.id;
    if (fault.delayMs) {
      const ok = await delays.wait(fault.delayMs, res);
      if (!ok) {
        finish(0);
        return;
      }
    }
    if (fault.dropConnection) {
      req.socket.destroy();
      finish(0);
      return;
    }
    if (fault.rawBody !== undefined) {
      const code = fault.status ?? 200;
      res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(fault.rawBody) });
      res.end(fault.rawBody);
      finish(code);
      return;
    }
    if (fault.status) {
      const gr = info.resourceRequest ? { group: info.apiGroup, resource: info.resource } : null;
      const err = statusForCode(fault.status, gr, info.name, auth.user ?? "system:anonymous", info.verb, info.namespace, fault.retryAfterSeconds);
      finish(sendError(res, err));
      return;
    }
  }

  let answer: Answer;
  try {
    if (over) throw tooLarge(MAX_BODY_BYTES);
    answer = serveApi(tenant, auth, info, method, q, text, contentType, req.headers.accept);
    if (fault?.mangle && answer.code === 200 && isPlainObject(answer.body)) {
      const body = mangled(answer.body as JsonObject, fault.mangle);
      if (body) {
        call.mangled = fault.mangle;
        answer = { ...answer, body };
      }
    }
  } catch (e) {
    finish(sendError(res, e));
    return;
  }
  if (answer.stream) {
    answer.stream(res);
    finish(200);
    return;
  }
  send(res, answer.code, answer.body, answer.headers);
  finish(answer.code);
  answer.after?.();
}

// --- the control API -----------------------------------------------------------

function strings(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) throw badRequest(`${what} must be an array of strings`);
  return v;
}

function onlyKeys(o: Record<string, unknown>, allowed: string[], what: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw badRequest(`unknown field ${JSON.stringify(k)} in ${what}`);
}

function int(v: unknown, what: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) throw badRequest(`${what} must be an integer from ${min} to ${max}`);
  return v;
}

function parseFault(body: unknown): KubeFault {
  if (!isPlainObject(body)) throw badRequest("a fault must be a JSON object");
  onlyKeys(body, ["match", "status", "retryAfterSeconds", "delayMs", "dropConnection", "rawBody", "mangle", "times"], "fault");
  const match = body["match"] ?? {};
  if (!isPlainObject(match)) throw badRequest("fault.match must be an object");
  onlyKeys(match, ["method", "pathIncludes", "verb"], "fault.match");
  const f: KubeFault = { match: {} };
  if (match["method"] !== undefined) {
    if (typeof match["method"] !== "string") throw badRequest("fault.match.method must be a string");
    f.match.method = match["method"].toUpperCase();
  }
  if (match["verb"] !== undefined) {
    if (typeof match["verb"] !== "string") throw badRequest("fault.match.verb must be a string");
    f.match.verb = match["verb"].toLowerCase();
  }
  if (match["pathIncludes"] !== undefined) {
    if (typeof match["pathIncludes"] !== "string") throw badRequest("fault.match.pathIncludes must be a string");
    f.match.pathIncludes = match["pathIncludes"];
  }
  const status = int(body["status"], "fault.status", 100, 599);
  if (status !== undefined) f.status = status;
  const retry = int(body["retryAfterSeconds"], "fault.retryAfterSeconds", 0, 3600);
  if (retry !== undefined) f.retryAfterSeconds = retry;
  const delay = int(body["delayMs"], "fault.delayMs", 0, MAX_DELAY_MS);
  if (delay !== undefined) f.delayMs = delay;
  const times = int(body["times"], "fault.times", 1, 1_000_000);
  if (times !== undefined) f.times = times;
  if (body["dropConnection"] !== undefined) {
    if (typeof body["dropConnection"] !== "boolean") throw badRequest("fault.dropConnection must be a boolean");
    f.dropConnection = body["dropConnection"];
  }
  if (body["rawBody"] !== undefined) {
    if (typeof body["rawBody"] !== "string" || body["rawBody"].length > 65536) throw badRequest("fault.rawBody must be a string of at most 64 KiB");
    f.rawBody = body["rawBody"];
  }
  if (body["mangle"] !== undefined) {
    if (typeof body["mangle"] !== "string" || !(MANGLES as readonly string[]).includes(body["mangle"])) {
      throw badRequest(`fault.mangle must be one of ${MANGLES.join(", ")}`);
    }
    f.mangle = body["mangle"] as Mangle;
  }
  if (f.status === undefined && f.delayMs === undefined && !f.dropConnection && f.rawBody === undefined && f.mangle === undefined) {
    throw badRequest("a fault needs status, delayMs, dropConnection, rawBody or mangle");
  }
  return f;
}

function parseServiceAccount(body: unknown): ServiceAccountSpec {
  if (!isPlainObject(body)) throw badRequest("a service account must be a JSON object");
  onlyKeys(body, ["name", "namespace", "token", "bindings"], "service account");
  const { name, namespace, token, bindings } = body;
  if (typeof name !== "string" || name === "") throw badRequest("name is required");
  if (typeof namespace !== "string" || namespace === "") throw badRequest("namespace is required");
  if (typeof token !== "string" || token.length < 8) throw badRequest("token must be a string of at least 8 characters");
  if (!Array.isArray(bindings)) throw badRequest("bindings must be an array");
  for (const b of bindings) {
    const problem = checkBinding(b);
    if (problem) throw badRequest(problem);
  }
  return { name, namespace, token, bindings: bindings as RbacBinding[] };
}

function namesAndNamespace(body: unknown): { names?: string[]; namespace?: string } {
  if (body === undefined) return {};
  if (!isPlainObject(body)) throw badRequest("body must be a JSON object");
  onlyKeys(body, ["names", "namespace"], "finalize");
  const out: { names?: string[]; namespace?: string } = {};
  if (body["names"] !== undefined) out.names = strings(body["names"], "names");
  if (body["namespace"] !== undefined) {
    if (typeof body["namespace"] !== "string") throw badRequest("namespace must be a string");
    out.namespace = body["namespace"];
  }
  return out;
}

function settingsOf(tenant: Tenant): JsonObject {
  return {
    namespaces: tenant.namespaces ? [...tenant.namespaces] : null,
    autoFinalize: tenant.autoFinalize,
    arcVersion: tenant.arcVersion,
    jobsStillRunning: tenant.jobsStillRunning,
    refuseTables: tenant.refuseTables,
    tableColumnsWithout: [...tenant.tableColumnsWithout],
    bookmarkEveryMs: tenant.objects.bookmarkEveryMs,
  };
}

function serveControl(tenant: Tenant, tenants: Map<string, Tenant>, method: string, path: string, text: string): Answer {
  const body = text.trim() === "" ? undefined : parseJson(text, "control request");
  const parts = path
    .split("/")
    .filter((p) => p !== "")
    .map((p) => decodeURIComponent(p));
  const route = `${method} ${parts.join("/")}`;
  switch (route) {
    case "GET state":
      return {
        code: 200,
        body: {
          ...settingsOf(tenant),
          resourceVersion: tenant.resourceVersion,
          items: tenant.items(),
          serviceAccounts: [...tenant.serviceAccounts.values()],
          faults: tenant.listFaults(),
          heldDeletions: tenant.heldDeletions(),
        },
      };
    case "GET ephemeralrunners":
      return { code: 200, body: { items: tenant.items() } };
    case "POST ephemeralrunners": {
      const list = Array.isArray(body) ? body : [body];
      const seeded: JsonObject[] = [];
      try {
        for (const o of list) seeded.push(tenant.seed(o));
      } catch (e) {
        // All or nothing, so a failed batch leaves no half-seeded state behind.
        for (const o of seeded) {
          const m = o["metadata"] as JsonObject;
          tenant.remove(String(m["namespace"]), String(m["name"]));
        }
        throw e;
      }
      return { code: 201, body: { items: seeded } };
    }
    case "POST finalize": {
      const { names, namespace } = namesAndNamespace(body);
      return { code: 200, body: { finalized: tenant.finalize(names, namespace) } };
    }
    case "PUT settings": {
      if (!isPlainObject(body)) throw badRequest("settings must be a JSON object");
      onlyKeys(body, ["autoFinalize", "namespaces", "jobsStillRunning", "bookmarkEveryMs", "refuseTables", "tableColumnsWithout"], "settings");
      if (body["refuseTables"] !== undefined) {
        if (typeof body["refuseTables"] !== "boolean") throw badRequest("refuseTables must be a boolean");
        tenant.refuseTables = body["refuseTables"];
      }
      if (body["tableColumnsWithout"] !== undefined) tenant.tableColumnsWithout = strings(body["tableColumnsWithout"], "tableColumnsWithout");
      if (body["bookmarkEveryMs"] !== undefined) {
        const ms = body["bookmarkEveryMs"];
        if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 10 || ms > 600_000)
          throw badRequest("bookmarkEveryMs must be an integer from 10 to 600000");
        tenant.objects.bookmarkEveryMs = ms;
      }
      if (body["autoFinalize"] !== undefined) {
        if (typeof body["autoFinalize"] !== "boolean") throw badRequest("autoFinalize must be a boolean");
        tenant.autoFinalize = body["autoFinalize"];
      }
      let released: ObjectRef[] = [];
      if (body["jobsStillRunning"] !== undefined) {
        if (typeof body["jobsStillRunning"] !== "boolean") throw badRequest("jobsStillRunning must be a boolean");
        released = tenant.setJobsStillRunning(body["jobsStillRunning"]);
      }
      if (body["namespaces"] !== undefined) {
        tenant.namespaces = body["namespaces"] === null ? null : new Set(strings(body["namespaces"], "namespaces"));
      }
      return { code: 200, body: { ...settingsOf(tenant), released } };
    }
    case "GET faults":
      return { code: 200, body: { faults: tenant.listFaults() } };
    case "POST faults":
      return { code: 201, body: tenant.addFault(parseFault(body)) };
    case "DELETE faults":
      tenant.clearFaults();
      return { code: 200, body: {} };
    case "GET calls":
      return { code: 200, body: { calls: tenant.calls() } };
    case "DELETE calls":
      tenant.clearCalls();
      return { code: 200, body: {} };
    case "POST serviceaccounts": {
      const sa = parseServiceAccount(body);
      const user = `system:serviceaccount:${sa.namespace}:${sa.name}`;
      tenant.addServiceAccount(user, sa.token, sa.bindings);
      return { code: 201, body: { user } };
    }
    case "POST compact":
      tenant.compact();
      return { code: 200, body: {} };
    case "POST watches/close":
      return { code: 200, body: { closed: tenant.objects.closeWatches() } };
    case "POST watches/expire":
      return { code: 200, body: { closed: tenant.objects.expireWatches(Number(tenant.resourceVersion)) } };
    case "DELETE tenant":
      tenants.delete(tenant.id);
      return { code: 200, body: {} };
  }
  if (parts[0] === "ephemeralrunners" && (parts.length === 3 || (parts.length === 4 && parts[3] === "status"))) {
    const ns = parts[1] ?? "";
    const name = parts[2] ?? "";
    if (parts.length === 4) {
      if (method !== "PUT") throw methodNotAllowed();
      return { code: 200, body: tenant.setStatus(ns, name, body) };
    }
    if (method === "GET") return { code: 200, body: tenant.get(ns, name) };
    if (method === "DELETE") {
      if (!tenant.remove(ns, name)) throw notFound({ group: "actions.github.com", resource: "ephemeralrunners" }, name);
      return { code: 200, body: {} };
    }
    throw methodNotAllowed();
  }
  throw pathNotFound();
}

// --- the server ------------------------------------------------------------------

export interface KubeStandin {
  url: string;
  close(): Promise<void>;
}

export async function startKubeStandin(opts: { port?: number } = {}): Promise<KubeStandin> {
  const tenants = new Map<string, Tenant>();
  const sockets = new Set<Socket>();
  const delays = new Delays();
  const access = await startAccessFaults();
  let url = "";

  const createTenant = (body: unknown): KubeTenantInfo => {
    const o = body === undefined ? {} : body;
    if (!isPlainObject(o)) throw badRequest("body must be a JSON object");
    onlyKeys(o, ["namespaces", "autoFinalize", "arcVersion"], "tenant options");
    const namespaces = o["namespaces"] === undefined ? null : strings(o["namespaces"], "namespaces");
    const autoFinalize = o["autoFinalize"] === undefined ? false : o["autoFinalize"];
    if (typeof autoFinalize !== "boolean") throw badRequest("autoFinalize must be a boolean");
    const arcVersion = o["arcVersion"] === undefined ? DEFAULT_ARC_VERSION : o["arcVersion"];
    if (!isArcVersion(arcVersion)) {
      throw badRequest(`arcVersion must be one of ${ARC_VERSIONS.join(", ")} (the CRDs in test/fixtures/arc), not ${JSON.stringify(arcVersion)}`);
    }
    if (tenants.size >= MAX_TENANTS) {
      // Forget the least recently used tenant rather than grow without bound.
      const oldest = [...tenants.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (oldest) tenants.delete(oldest.id);
    }
    const t = new Tenant(namespaces, autoFinalize, arcVersion);
    tenants.set(t.id, t);
    return { id: t.id, baseUrl: `${url}/t/${t.id}`, adminToken: t.adminToken };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    const method = (req.method ?? "GET").toUpperCase();
    if (u.pathname === "/__tenants") {
      const { text } = await readBody(req);
      if (method !== "POST") throw methodNotAllowed();
      send(res, 201, createTenant(text.trim() === "" ? undefined : parseJson(text, "tenant options")));
      return;
    }
    const m = /^\/t\/([0-9a-f]+)(\/.*)?$/.exec(u.pathname);
    const tenant = m ? tenants.get(m[1] ?? "") : undefined;
    if (!m || !tenant) {
      await readBody(req);
      throw pathNotFound();
    }
    tenant.lastUsed = Date.now();
    const rest = m[2] ?? "/";
    if (rest.startsWith("/__control/")) {
      const { text, tooLarge: over } = await readBody(req);
      if (over) throw tooLarge(MAX_BODY_BYTES);
      if (authenticate(tenant, req.headers.authorization).kind !== "admin") throw unauthorized();
      const controlPath = rest.slice("/__control/".length);
      const answer = access.control(tenant.id, method, controlPath, text) ?? serveControl(tenant, tenants, method, controlPath, text);
      send(res, answer.code, answer.body, answer.headers);
      return;
    }
    await handleApi(tenant, req, res, rest, u.searchParams, delays, access);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      sendError(res, e);
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("kube stand-in: no TCP address");
  url = `http://127.0.0.1:${address.port}`;

  return {
    url,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Delayed answers and keep-alive connections must not hold close() up.
      delays.cancelAll();
      for (const s of sockets) s.destroy();
      await Promise.all([closed, access.close()]);
    },
  };
}
