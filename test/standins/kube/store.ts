// One tenant's EphemeralRunners with the API server's storage semantics:
// resourceVersions, generation, finalizers and deletionTimestamp, delete
// preconditions, status subresource, consistent paging with continue tokens.
import { randomBytes, randomUUID } from "node:crypto";
import { applyDefaults, ephemeralRunnerSchema, isPlainObject, validate, validateObjectMeta, type Schema, type ValidationResult } from "./crd-schema.ts";
import { ARC_BEHAVIOUR, type ArcVersion } from "./arc-versions.ts";
import { jsonPatch, mergePatch, PatchError } from "./patch.ts";
import { managedFieldsOf } from "./managed-fields.ts";
import { ObjectsWithHistory } from "./watch.ts";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "./selectors.ts";
import {
  alreadyExists,
  badRequest,
  conflict,
  expired,
  failure,
  invalid,
  KubeError,
  notFound,
  RUNNERS,
  success,
  unsupportedMediaType,
  type FieldError,
} from "./status.ts";
import {
  EPHEMERAL_RUNNER_API_VERSION,
  EPHEMERAL_RUNNER_FINALIZERS,
  EPHEMERAL_RUNNER_KIND,
  type Json,
  type JsonObject,
  type KubeCall,
  type KubeFault,
  type KubeFaultState,
  type ObjectRef,
  type RbacBinding,
} from "./types.ts";

/** How a write treats fields the CRD does not declare ("seed": the control API rejects them). */
export type WriteMode = "seed" | "Strict" | "Warn" | "Ignore";

export interface WriteResult {
  object: JsonObject;
  warnings: string[];
}

export interface DeleteResult {
  code: number;
  body: JsonObject;
}

const MAX_OBJECTS = 5000;
const MAX_SNAPSHOTS = 64;
const MAX_CALLS = 5000;
const MAX_FAULTS = 100;
const MAX_SERVICE_ACCOUNTS = 100;

const namespacesGr = { group: "", resource: "namespaces" };

function nowTimestamp(): string {
  // Kubernetes timestamps have whole seconds.
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Keys sorted at every level: how the API server encodes unstructured (custom) objects. */
function sortKeys(v: unknown): Json {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isPlainObject(v)) {
    const out: JsonObject = {};
    for (const k of Object.keys(v).sort()) {
      const x = v[k];
      if (x !== undefined) out[k] = sortKeys(x);
    }
    return out;
  }
  return v as Json;
}

function metaOf(o: JsonObject): Record<string, unknown> {
  const m = o["metadata"];
  if (!isPlainObject(m)) throw new Error("stored object without metadata");
  return m;
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function finalizersOf(m: Record<string, unknown>): string[] {
  const f = m["finalizers"];
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === "string") : [];
}

// Everything but metadata and status: what a change of bumps metadata.generation.
function specPart(o: Record<string, unknown>): string {
  const { metadata: _m, status: _s, ...rest } = o;
  return JSON.stringify(sortKeys(rest));
}

function withoutResourceVersion(o: JsonObject): string {
  const copy = structuredClone(o);
  delete metaOf(copy)["resourceVersion"];
  return JSON.stringify(sortKeys(copy));
}

// The CRD schema, minus `metadata: {type: object}`: ObjectMeta is checked separately.
const rootSchemas = new Map<ArcVersion, Schema>();
function rootSchema(version: ArcVersion): Schema {
  let root = rootSchemas.get(version);
  if (!root) {
    const s = ephemeralRunnerSchema(version);
    root = { ...s, properties: { ...s.properties, metadata: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } };
    rootSchemas.set(version, root);
  }
  return root;
}

interface ContinueToken {
  rv: number;
  start: string;
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv, start })).toString("base64url");
}

function decodeContinue(token: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw badRequest("continue key is not valid: illegal base64 data or JSON");
  }
  if (!isPlainObject(parsed) || parsed["v"] !== "meta.k8s.io/v1") {
    throw badRequest("continue key is not valid: server does not recognize this encoded version");
  }
  const rv = parsed["rv"];
  const start = parsed["start"];
  if (typeof rv !== "number" || !Number.isInteger(rv) || rv === 0 || typeof start !== "string" || start === "") {
    throw badRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  }
  return { rv, start };
}

export interface DeleteOptions {
  uid?: string;
  resourceVersion?: string;
  propagationPolicy?: string;
  orphanDependents?: boolean;
  dryRun: boolean;
}

type Entry = readonly [key: string, obj: JsonObject];

export class Tenant {
  readonly id: string;
  readonly adminToken: string;
  namespaces: Set<string> | null;
  autoFinalize: boolean;
  /** Whose EphemeralRunner CRD this cluster runs: objects are validated against it. */
  readonly arcVersion: ArcVersion;
  /**
   * GitHub says the job of each busy runner still runs: ARC's finalizer then holds
   * the deletion of a runner with a job (status.workflowRunId), retrying, and
   * neither autoFinalize nor finalize() removes it until this is switched off.
   */
  private jobsRunning = false;
  /** The deletions autoFinalize holds for that reason: namespace/name to uid. */
  private readonly held = new Map<string, string>();
  /** Refuse Tables (406), as an API server without the Table handler would; and printer columns left out of the Tables served (an older CRD). */
  refuseTables = false;
  tableColumnsWithout: string[] = [];
  lastUsed = Date.now();
  readonly serviceAccounts = new Map<string, { user: string; bindings: RbacBinding[] }>();
  /** The kube-system namespace's uid: this cluster's identity, distinct per tenant (GET /api/v1/namespaces/kube-system). */
  readonly kubeSystemUid = randomUUID();
  private rv = 1000;
  /** The objects, recording every change for watches (watch.ts). */
  readonly objects: ObjectsWithHistory = new ObjectsWithHistory().withBump(
    () => this.nextRv(),
    () => this.resourceVersion,
  );
  private readonly snapshots = new Map<number, Entry[]>();
  private faults: KubeFaultState[] = [];
  private faultSeq = 0;
  private callLog: KubeCall[] = [];
  private callSeq = 0;

  constructor(namespaces: string[] | null, autoFinalize: boolean, arcVersion: ArcVersion) {
    this.id = randomBytes(8).toString("hex");
    this.adminToken = `admin-${randomBytes(24).toString("base64url")}`;
    this.namespaces = namespaces ? new Set(namespaces) : null;
    this.autoFinalize = autoFinalize;
    this.arcVersion = arcVersion;
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  private nextRv(): string {
    this.rv += 1;
    return String(this.rv);
  }

  private sorted(): Entry[] {
    return [...this.objects.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  items(): JsonObject[] {
    return this.sorted().map(([, o]) => sortKeys(o) as JsonObject);
  }

  // --- reads ---------------------------------------------------------------

  get(ns: string, name: string): JsonObject {
    const o = this.objects.get(`${ns}/${name}`);
    if (!o) throw notFound(RUNNERS, name);
    return sortKeys(o) as JsonObject;
  }

  /** A list call; `ns` "" lists across all namespaces. */
  list(ns: string, q: URLSearchParams): JsonObject {
    const labelReqs = parseLabelSelector(q.get("labelSelector") ?? "");
    const fieldReqs = parseFieldSelector(q.get("fieldSelector") ?? "");
    const limitText = q.get("limit");
    let limit = 0;
    if (limitText !== null && limitText !== "") {
      if (!/^-?\d+$/.test(limitText)) throw badRequest(`invalid value for limit: ${JSON.stringify(limitText)}`);
      limit = Math.max(0, Number(limitText));
    }
    const cont = q.get("continue") ?? "";
    let entries: Entry[];
    let listRv = this.rv;
    let start = "";
    if (cont !== "") {
      const token = decodeContinue(cont);
      start = token.start;
      if (token.rv === -1 || token.rv === this.rv) {
        entries = this.sorted();
      } else {
        const snap = this.snapshots.get(token.rv);
        if (!snap) {
          // etcd compacted that revision: the real server answers 410 with an inconsistent-continue token.
          throw expired(
            "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
            encodeContinue(-1, start),
          );
        }
        entries = snap;
        listRv = token.rv;
      }
    } else {
      entries = this.sorted();
    }
    const prefix = ns === "" ? "" : `${ns}/`;
    const scoped = entries.filter(([k]) => k.startsWith(prefix)).map(([k, o]) => [k.slice(prefix.length), o] as const);
    const items: Json[] = [];
    let lastKey = "";
    let more = false;
    let remaining = 0;
    for (let i = 0; i < scoped.length; i++) {
      const [rel, o] = scoped[i] as Entry;
      if (start !== "" && rel < start) continue;
      if (limit > 0 && items.length >= limit) {
        more = true;
        remaining = scoped.length - i;
        break;
      }
      const m = metaOf(o);
      const labels = isPlainObject(m["labels"]) ? (m["labels"] as Record<string, string>) : undefined;
      if (!matchesLabels(labelReqs, labels) || !matchesFields(fieldReqs, str(m["namespace"]), str(m["name"]))) continue;
      items.push(sortKeys(o));
      lastKey = rel;
    }
    const metadata: JsonObject = { resourceVersion: String(listRv) };
    if (more) {
      metadata["continue"] = encodeContinue(listRv, `${lastKey}\u0000`);
      // Only an unfiltered list knows how many items are left.
      if (labelReqs.length === 0 && fieldReqs.length === 0) metadata["remainingItemCount"] = remaining;
      if (listRv === this.rv) this.keepSnapshot(entries);
    }
    return sortKeys({ apiVersion: EPHEMERAL_RUNNER_API_VERSION, items, kind: "EphemeralRunnerList", metadata }) as JsonObject;
  }

  private keepSnapshot(entries: Entry[]): void {
    if (this.snapshots.has(this.rv)) return;
    this.snapshots.set(this.rv, entries);
    while (this.snapshots.size > MAX_SNAPSHOTS) {
      const oldest = this.snapshots.keys().next().value;
      if (oldest === undefined) break;
      this.snapshots.delete(oldest);
    }
  }

  /** Forget old revisions, as etcd compaction does: older continue tokens and watch resumes then get 410 Expired. */
  compact(): void {
    this.snapshots.clear();
    this.objects.compact(this.rv);
  }

  // --- creates -------------------------------------------------------------

  private checkNamespace(ns: string): void {
    if (this.namespaces && !this.namespaces.has(ns)) throw notFound(namespacesGr, ns);
  }

  /** Validate a whole object; returns warnings, throws 400/422 per mode. */
  private admit(obj: Record<string, unknown>, name: string, mode: WriteMode): string[] {
    const prune = mode !== "seed" && mode !== "Strict" ? "prune" : "reject";
    const metaResult = validateObjectMeta(obj["metadata"], prune);
    const bodyResult = validate(obj, rootSchema(this.arcVersion), "", prune);
    const result: ValidationResult = {
      errors: [...metaResult.errors, ...bodyResult.errors],
      unknown: [...metaResult.unknown, ...bodyResult.unknown],
    };
    if (mode === "Strict" && result.unknown.length > 0) {
      throw badRequest(
        `EphemeralRunner in version "v1alpha1" cannot be handled as a EphemeralRunner: strict decoding error: ${result.unknown.map((f) => `unknown field "${f}"`).join(", ")}`,
      );
    }
    const errors: FieldError[] = [...result.errors];
    if (mode === "seed") {
      for (const f of result.unknown) {
        errors.push({ type: "Forbidden", field: f, detail: `unknown field "${f}": not in ARC ${this.arcVersion}'s EphemeralRunner CRD` });
      }
    }
    if (errors.length > 0) throw invalid(EPHEMERAL_RUNNER_KIND, RUNNERS.group, name, errors);
    return mode === "Warn" ? result.unknown.map((f) => `unknown field "${f}"`) : [];
  }

  private checkTypeMeta(obj: Record<string, unknown>, fill: boolean): void {
    for (const [field, want] of [
      ["apiVersion", EPHEMERAL_RUNNER_API_VERSION],
      ["kind", EPHEMERAL_RUNNER_KIND],
    ] as const) {
      if (obj[field] === undefined && fill) obj[field] = want;
      else if (obj[field] === undefined)
        throw badRequest(`Object '${field === "kind" ? "Kind" : "apiVersion"}' is missing in '${JSON.stringify(obj).slice(0, 200)}'`);
      else if (obj[field] !== want) {
        throw badRequest(
          `the ${field === "kind" ? "kind" : "API version"} in the data (${String(obj[field])}) does not match the expected ${field === "kind" ? "kind" : "API version"} (${want})`,
        );
      }
    }
  }

  private generateName(prefix: string): string {
    const alphabet = "bcdfghjklmnpqrstvwxz2456789";
    const bytes = randomBytes(5);
    let s = "";
    for (const b of bytes) s += alphabet[b % alphabet.length];
    return `${prefix.slice(0, 58)}${s}`;
  }

  /**
   * Seed through the control API: unknown fields are errors; ARC's finalizers are
   * added unless metadata.finalizers is given; uid, creationTimestamp and
   * deletionTimestamp may be set by the test; status is kept.
   */
  seed(raw: unknown): JsonObject {
    return this.createObject(raw, undefined, "seed", false).object;
  }

  /** POST through the API: status is dropped (status subresource), system fields are the server's. */
  create(ns: string, raw: unknown, mode: WriteMode, dryRun: boolean): WriteResult {
    return this.createObject(raw, ns, mode, dryRun);
  }

  private createObject(raw: unknown, pathNs: string | undefined, mode: WriteMode, dryRun: boolean): WriteResult {
    if (!isPlainObject(raw)) throw badRequest("the object must be a JSON object");
    const obj = structuredClone(raw) as Record<string, unknown>;
    const seeding = mode === "seed";
    this.checkTypeMeta(obj, seeding);
    if (obj["metadata"] === undefined) obj["metadata"] = {};
    const meta = obj["metadata"];
    if (!isPlainObject(meta)) throw badRequest("metadata must be an object");
    if (pathNs !== undefined) {
      if (meta["namespace"] !== undefined && meta["namespace"] !== pathNs) {
        throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
      }
      meta["namespace"] = pathNs;
    }
    if (typeof meta["name"] !== "string" && typeof meta["generateName"] === "string") {
      meta["name"] = this.generateName(meta["generateName"]);
    }
    const name = str(meta["name"]);
    const pre: FieldError[] = [];
    if (name === "") pre.push({ type: "Required", field: "metadata.name", detail: "name or generateName is required" });
    if (typeof meta["namespace"] !== "string" || meta["namespace"] === "") pre.push({ type: "Required", field: "metadata.namespace" });
    if (pre.length > 0) throw invalid(EPHEMERAL_RUNNER_KIND, RUNNERS.group, name, pre);
    const ns = str(meta["namespace"]);
    this.checkNamespace(ns);

    if (seeding) {
      if (meta["finalizers"] === undefined) meta["finalizers"] = [...EPHEMERAL_RUNNER_FINALIZERS];
    } else {
      if (meta["resourceVersion"] !== undefined && meta["resourceVersion"] !== "") {
        throw badRequest("resourceVersion should not be set on objects to be created");
      }
      for (const f of ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "selfLink", "managedFields"]) {
        delete meta[f];
      }
      delete obj["status"];
    }
    applyDefaults(obj, rootSchema(this.arcVersion));
    const warnings = this.admit(obj, name, mode);
    if (seeding && meta["deletionTimestamp"] !== undefined && finalizersOf(meta).length === 0) {
      throw invalid(EPHEMERAL_RUNNER_KIND, RUNNERS.group, name, [
        {
          type: "Forbidden",
          field: "metadata.deletionTimestamp",
          detail: "an object without finalizers cannot stay marked for deletion (it would be removed at once)",
        },
      ]);
    }
    const key = `${ns}/${name}`;
    if (this.objects.has(key)) throw alreadyExists(RUNNERS, name);
    if (this.objects.size >= MAX_OBJECTS) throw badRequest(`the stand-in holds at most ${MAX_OBJECTS} objects per tenant`);

    meta["uid"] = typeof meta["uid"] === "string" && meta["uid"] !== "" ? meta["uid"] : randomUUID();
    meta["creationTimestamp"] = typeof meta["creationTimestamp"] === "string" ? meta["creationTimestamp"] : nowTimestamp();
    meta["generation"] = typeof meta["generation"] === "number" ? meta["generation"] : 1;
    if (meta["deletionTimestamp"] !== undefined && meta["deletionGracePeriodSeconds"] === undefined) meta["deletionGracePeriodSeconds"] = 0;
    delete meta["selfLink"];
    meta["managedFields"] = managedFieldsOf(obj as JsonObject, str(meta["creationTimestamp"]));
    if (dryRun) {
      meta["resourceVersion"] = this.resourceVersion;
      return { object: sortKeys(obj) as JsonObject, warnings };
    }
    meta["resourceVersion"] = this.nextRv();
    const stored = sortKeys(obj) as JsonObject;
    this.objects.set(key, stored);
    return { object: structuredClone(stored), warnings };
  }

  // --- updates -------------------------------------------------------------

  /** PUT on the object or its status subresource. */
  update(ns: string, name: string, raw: unknown, sub: "" | "status", mode: WriteMode, dryRun: boolean): WriteResult {
    const old = this.objects.get(`${ns}/${name}`);
    if (!old) throw notFound(RUNNERS, name);
    if (!isPlainObject(raw)) throw badRequest("the object must be a JSON object");
    const candidate = structuredClone(raw) as Record<string, unknown>;
    this.checkTypeMeta(candidate, false);
    const meta = candidate["metadata"];
    if (!isPlainObject(meta) || typeof meta["resourceVersion"] !== "string" || meta["resourceVersion"] === "") {
      throw invalid(EPHEMERAL_RUNNER_KIND, RUNNERS.group, name, [
        { type: "Invalid", field: "metadata.resourceVersion", value: "0x0", detail: "must be specified for an update" },
      ]);
    }
    return this.applyUpdate(old, candidate, ns, name, sub, mode, dryRun);
  }

  /** PATCH with application/merge-patch+json or application/json-patch+json. */
  patch(ns: string, name: string, contentType: string, body: unknown, sub: "" | "status", mode: WriteMode, dryRun: boolean): WriteResult {
    const old = this.objects.get(`${ns}/${name}`);
    if (!old) throw notFound(RUNNERS, name);
    let candidate: unknown;
    try {
      if (contentType === "application/merge-patch+json") {
        if (!isPlainObject(body)) throw new PatchError("merge patch must be a JSON object");
        candidate = mergePatch(structuredClone(old), body);
      } else if (contentType === "application/json-patch+json") {
        candidate = jsonPatch(old, body);
      } else {
        // Custom resources do not support strategic merge patch; apply-patch is not modelled here.
        throw unsupportedMediaType(contentType);
      }
    } catch (e) {
      if (e instanceof PatchError) throw new KubeError(failure(422, "Invalid", e.message));
      throw e;
    }
    if (!isPlainObject(candidate)) throw badRequest("the patched object must be a JSON object");
    this.checkTypeMeta(candidate, false);
    return this.applyUpdate(old, candidate, ns, name, sub, mode, dryRun);
  }

  private applyUpdate(
    old: JsonObject,
    candidate: Record<string, unknown>,
    ns: string,
    name: string,
    sub: "" | "status",
    mode: WriteMode,
    dryRun: boolean,
  ): WriteResult {
    const oldMeta = metaOf(old);
    const meta = candidate["metadata"];
    if (!isPlainObject(meta)) throw badRequest("metadata must be an object");
    if (meta["name"] !== undefined && meta["name"] !== name) {
      throw badRequest(`the name of the object (${String(meta["name"])}) does not match the name on the URL (${name})`);
    }
    if (meta["namespace"] !== undefined && meta["namespace"] !== ns) {
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    }
    const oldUid = str(oldMeta["uid"]);
    if (typeof meta["uid"] === "string" && meta["uid"] !== "" && meta["uid"] !== oldUid) {
      throw conflict(RUNNERS, name, `Precondition failed: UID in precondition: ${meta["uid"]}, UID in object meta: ${oldUid}`);
    }
    if (typeof meta["resourceVersion"] === "string" && meta["resourceVersion"] !== oldMeta["resourceVersion"]) {
      throw conflict(RUNNERS, name, "the object has been modified; please apply your changes to the latest version and try again");
    }
    applyDefaults(candidate, rootSchema(this.arcVersion));
    const warnings = this.admit(candidate, name, mode);

    let next: Record<string, unknown>;
    if (sub === "status") {
      // The status subresource changes status only.
      next = structuredClone(old) as Record<string, unknown>;
      if (candidate["status"] === undefined) delete next["status"];
      else next["status"] = candidate["status"];
    } else {
      next = { ...candidate };
      if (old["status"] === undefined) delete next["status"];
      else next["status"] = structuredClone(old["status"]);
      const merged: Record<string, unknown> = { ...meta };
      for (const f of ["name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"]) {
        if (oldMeta[f] === undefined) delete merged[f];
        else merged[f] = oldMeta[f];
      }
      delete merged["selfLink"];
      // The server keeps its own record of who wrote what: a client's managedFields are not taken.
      if (oldMeta["managedFields"] === undefined) delete merged["managedFields"];
      else merged["managedFields"] = oldMeta["managedFields"];
      if (oldMeta["deletionTimestamp"] !== undefined) {
        const before = new Set(finalizersOf(oldMeta));
        const added = finalizersOf(merged).filter((f) => !before.has(f));
        if (added.length > 0) {
          throw invalid(EPHEMERAL_RUNNER_KIND, RUNNERS.group, name, [
            {
              type: "Forbidden",
              field: "metadata.finalizers",
              detail: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(", ")}}`,
            },
          ]);
        }
      }
      if (specPart(next) !== specPart(old)) merged["generation"] = (typeof oldMeta["generation"] === "number" ? oldMeta["generation"] : 1) + 1;
      next["metadata"] = merged;
    }
    const nextMeta = next["metadata"] as Record<string, unknown>;
    nextMeta["resourceVersion"] = oldMeta["resourceVersion"];
    const nextObj = sortKeys(next) as JsonObject;
    // A no-op write does not change the resourceVersion.
    if (withoutResourceVersion(nextObj) === withoutResourceVersion(old) || dryRun) {
      return { object: nextObj, warnings };
    }
    metaOf(nextObj)["resourceVersion"] = this.nextRv();
    this.store(ns, name, nextObj);
    return { object: structuredClone(nextObj), warnings };
  }

  // An object being deleted whose last finalizer goes is removed (what ARC's finalizer removal triggers).
  private store(ns: string, name: string, obj: JsonObject): void {
    const m = metaOf(obj);
    if (m["deletionTimestamp"] !== undefined && finalizersOf(m).length === 0) this.objects.delete(`${ns}/${name}`);
    else this.objects.set(`${ns}/${name}`, obj);
  }

  /** Control API: replace status (validated against the CRD; unknown fields rejected). */
  setStatus(ns: string, name: string, status: unknown): JsonObject {
    const old = this.objects.get(`${ns}/${name}`);
    if (!old) throw notFound(RUNNERS, name);
    const next = structuredClone(old) as Record<string, unknown>;
    if (status === null || status === undefined) delete next["status"];
    else next["status"] = status;
    applyDefaults(next, rootSchema(this.arcVersion));
    this.admit(next, name, "seed");
    const obj = sortKeys(next) as JsonObject;
    if (withoutResourceVersion(obj) === withoutResourceVersion(old)) return structuredClone(old);
    metaOf(obj)["resourceVersion"] = this.nextRv();
    this.objects.set(`${ns}/${name}`, obj);
    return structuredClone(obj);
  }

  // --- deletes -------------------------------------------------------------

  delete(ns: string, name: string, opts: DeleteOptions): DeleteResult {
    const key = `${ns}/${name}`;
    const old = this.objects.get(key);
    if (!old) throw notFound(RUNNERS, name);
    const m = metaOf(old);
    const uid = str(m["uid"]);
    if (opts.uid !== undefined && opts.uid !== uid) {
      throw conflict(RUNNERS, name, `Precondition failed: UID in precondition: ${opts.uid}, UID in object meta: ${uid}`);
    }
    const rv = str(m["resourceVersion"]);
    if (opts.resourceVersion !== undefined && opts.resourceVersion !== rv) {
      throw conflict(RUNNERS, name, `Precondition failed: ResourceVersion in precondition: ${opts.resourceVersion}, ResourceVersion in object meta: ${rv}`);
    }
    // 202 only when the deprecated orphanDependents=false was sent and the object stays.
    const stayingCode = opts.orphanDependents === false ? 202 : 200;
    if (m["deletionTimestamp"] !== undefined) return { code: stayingCode, body: structuredClone(old) };

    const finalizers = finalizersOf(m);
    const policy = opts.orphanDependents === true ? "Orphan" : opts.propagationPolicy;
    if (policy === "Foreground" && !finalizers.includes("foregroundDeletion")) finalizers.push("foregroundDeletion");
    if (policy === "Orphan" && !finalizers.includes("orphan")) finalizers.push("orphan");
    if (finalizers.length === 0) {
      if (!opts.dryRun) this.objects.delete(key);
      return { code: 200, body: success({ name, group: RUNNERS.group, kind: RUNNERS.resource, uid }) as unknown as JsonObject };
    }
    const next = structuredClone(old);
    const nm = metaOf(next);
    nm["finalizers"] = finalizers;
    nm["deletionTimestamp"] = nowTimestamp();
    nm["deletionGracePeriodSeconds"] = 0;
    if (typeof nm["generation"] === "number") nm["generation"] += 1;
    if (opts.dryRun) return { code: stayingCode, body: sortKeys(next) as JsonObject };
    nm["resourceVersion"] = this.nextRv();
    const stored = sortKeys(next) as JsonObject;
    this.objects.set(key, stored);
    return { code: stayingCode, body: structuredClone(stored) };
  }

  /**
   * What ARC's controller does for runners being deleted: drop their finalizers,
   * so they disappear. Optionally only the named ones (and only in `namespace`).
   */
  finalize(names?: string[], namespace?: string): ObjectRef[] {
    const done: ObjectRef[] = [];
    for (const [key, o] of this.sorted()) {
      const m = metaOf(o);
      const ref = { namespace: str(m["namespace"]), name: str(m["name"]) };
      if (m["deletionTimestamp"] === undefined) continue;
      if (names && !names.includes(ref.name)) continue;
      if (namespace !== undefined && namespace !== ref.namespace) continue;
      if (this.holds(o)) continue;
      this.objects.delete(key);
      this.held.delete(key);
      this.nextRv();
      done.push(ref);
    }
    return done;
  }

  /** After a DELETE through the API: what ARC's controller does next when autoFinalize plays it. */
  afterDelete(ns: string, name: string): void {
    if (!this.autoFinalize) return;
    const key = `${ns}/${name}`;
    const o = this.objects.get(key);
    if (o && this.holds(o)) this.held.set(key, str(metaOf(o)["uid"]));
    else this.finalize([name], ns);
  }

  // GitHub can say a job still runs only for a runner that has one (status.workflowRunId); an idle one goes.
  // From 0.15 (#4664) the finalizer goes before deregistration: nothing is held, a busy runner dies at once.
  private holds(o: JsonObject): boolean {
    if (!this.jobsRunning || ARC_BEHAVIOUR[this.arcVersion].finalizerFirst) return false;
    const status = o["status"];
    const run = isPlainObject(status) ? status["workflowRunId"] : undefined;
    return typeof run === "number" && run !== 0;
  }

  get jobsStillRunning(): boolean {
    return this.jobsRunning;
  }

  /**
   * Switch "GitHub says the job runs". Switching it off releases the deletions
   * autoFinalize held meanwhile (they finish now, as ARC's next 30 s retry would);
   * returns the objects that went.
   */
  setJobsStillRunning(on: boolean): ObjectRef[] {
    this.jobsRunning = on;
    if (on) return [];
    const released: ObjectRef[] = [];
    for (const key of this.heldKeys()) {
      const [ns = "", name = ""] = key.split("/");
      released.push(...this.finalize([name], ns));
    }
    this.held.clear();
    return released;
  }

  // Held keys whose object is still the one held (a name can come back as a new object).
  private heldKeys(): string[] {
    return [...this.held]
      .filter(([k, uid]) => {
        const o = this.objects.get(k);
        return o !== undefined && str(metaOf(o)["uid"]) === uid;
      })
      .map(([k]) => k)
      .sort();
  }

  /** Deletions autoFinalize is holding while GitHub says the job runs. */
  heldDeletions(): ObjectRef[] {
    return this.heldKeys().map((k) => {
      const [namespace = "", name = ""] = k.split("/");
      return { namespace, name };
    });
  }

  /** Control API: remove an object at once, finalizers or not (it left the cluster without us). */
  remove(ns: string, name: string): boolean {
    this.held.delete(`${ns}/${name}`);
    const had = this.objects.delete(`${ns}/${name}`);
    if (had) this.nextRv();
    return had;
  }

  // --- faults and call log -------------------------------------------------

  addFault(f: KubeFault): KubeFaultState {
    if (this.faults.length >= MAX_FAULTS) throw badRequest(`at most ${MAX_FAULTS} faults per tenant`);
    const state: KubeFaultState = { ...structuredClone(f), id: ++this.faultSeq, remaining: f.times ?? null, taken: 0 };
    this.faults.push(state);
    return state;
  }

  listFaults(): KubeFaultState[] {
    return structuredClone(this.faults);
  }

  clearFaults(): void {
    this.faults = [];
  }

  /** The first fault matching the request; consumes one of its `times`. */
  takeFault(method: string, path: string, verb: string): KubeFaultState | undefined {
    const f = this.faults.find(
      (x) =>
        (x.match.method === undefined || x.match.method.toUpperCase() === method.toUpperCase()) &&
        (x.match.verb === undefined || x.match.verb === verb) &&
        (x.match.pathIncludes === undefined || path.includes(x.match.pathIncludes)),
    );
    if (!f) return undefined;
    f.taken++;
    if (f.remaining !== null) {
      f.remaining -= 1;
      if (f.remaining <= 0) this.faults = this.faults.filter((x) => x !== f);
    }
    return structuredClone(f);
  }

  record(call: Omit<KubeCall, "seq">): void {
    this.callLog.push({ seq: ++this.callSeq, ...call });
    if (this.callLog.length > MAX_CALLS) this.callLog.splice(0, this.callLog.length - MAX_CALLS);
  }

  calls(): KubeCall[] {
    return structuredClone(this.callLog);
  }

  clearCalls(): void {
    this.callLog = [];
  }

  addServiceAccount(user: string, token: string, bindings: RbacBinding[]): void {
    if (token === this.adminToken || this.serviceAccounts.has(token)) throw badRequest("that token is already in use");
    if (this.serviceAccounts.size >= MAX_SERVICE_ACCOUNTS) throw badRequest(`at most ${MAX_SERVICE_ACCOUNTS} service accounts per tenant`);
    this.serviceAccounts.set(token, { user, bindings: structuredClone(bindings) });
  }
}
