// metav1.Status errors with the messages, reasons and details kube-apiserver
// uses (k8s.io/apimachinery/pkg/api/errors), so clients see the real wire format.
import type { KubeStatus, KubeStatusCause, KubeStatusDetails } from "./types.ts";

export interface GroupResource {
  group: string;
  resource: string;
}

export const RUNNERS: GroupResource = { group: "actions.github.com", resource: "ephemeralrunners" };

function groupResourceString(gr: GroupResource): string {
  return gr.group === "" ? gr.resource : `${gr.resource}.${gr.group}`;
}

/** An error that is answered with its Status body (and extra headers). */
export class KubeError extends Error {
  readonly status: KubeStatus;
  readonly headers: Record<string, string>;
  constructor(status: KubeStatus, headers: Record<string, string> = {}) {
    super(status.message ?? status.reason ?? "error");
    this.status = status;
    this.headers = headers;
  }
  get code(): number {
    return this.status.code ?? 500;
  }
}

// Field order follows the Go structs, which is what the real server emits.
function details(d: KubeStatusDetails): KubeStatusDetails {
  const out: KubeStatusDetails = {};
  if (d.name) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind) out.kind = d.kind;
  if (d.uid) out.uid = d.uid;
  if (d.causes && d.causes.length > 0) out.causes = d.causes;
  if (d.retryAfterSeconds) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

export function failure(code: number, reason: string, message: string, d?: KubeStatusDetails, metadata: KubeStatus["metadata"] = {}): KubeStatus {
  const s: KubeStatus = { kind: "Status", apiVersion: "v1", metadata, status: "Failure", message };
  if (reason) s.reason = reason;
  if (d) s.details = details(d);
  s.code = code;
  return s;
}

export function success(d: KubeStatusDetails): KubeStatus {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details: details(d) };
}

export function notFound(gr: GroupResource, name: string): KubeError {
  return new KubeError(
    failure(404, "NotFound", `${groupResourceString(gr)} "${name}" not found`, {
      name,
      group: gr.group,
      kind: gr.resource,
    }),
  );
}

export function pathNotFound(): KubeError {
  return new KubeError(failure(404, "NotFound", "the server could not find the requested resource", {}));
}

export function conflict(gr: GroupResource, name: string, why: string): KubeError {
  return new KubeError(
    failure(409, "Conflict", `Operation cannot be fulfilled on ${groupResourceString(gr)} "${name}": ${why}`, {
      name,
      group: gr.group,
      kind: gr.resource,
    }),
  );
}

export function alreadyExists(gr: GroupResource, name: string): KubeError {
  return new KubeError(
    failure(409, "AlreadyExists", `${groupResourceString(gr)} "${name}" already exists`, {
      name,
      group: gr.group,
      kind: gr.resource,
    }),
  );
}

export function forbidden(gr: GroupResource | null, name: string, why: string): KubeError {
  let message: string;
  if (!gr) message = `forbidden: ${why}`;
  else if (name === "") message = `${groupResourceString(gr)} is forbidden: ${why}`;
  else message = `${groupResourceString(gr)} "${name}" is forbidden: ${why}`;
  return new KubeError(failure(403, "Forbidden", message, gr ? { name, group: gr.group, kind: gr.resource } : {}));
}

export function unauthorized(): KubeError {
  return new KubeError(failure(401, "Unauthorized", "Unauthorized"));
}

export function badRequest(message: string): KubeError {
  return new KubeError(failure(400, "BadRequest", message));
}

export function methodNotAllowed(): KubeError {
  return new KubeError(failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}));
}

export function unsupportedMediaType(contentType: string): KubeError {
  return new KubeError(
    failure(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json (got ${JSON.stringify(contentType)})`,
      {},
    ),
  );
}

export function tooLarge(limit: number): KubeError {
  return new KubeError(failure(413, "RequestEntityTooLarge", `Request entity too large: limit is ${limit}`));
}

function tooManyRequests(retryAfterSeconds: number): KubeError {
  return new KubeError(failure(429, "TooManyRequests", "Too many requests, please try again later.", { retryAfterSeconds }), {
    "Retry-After": String(retryAfterSeconds),
  });
}

export function internalError(why: string): KubeError {
  return new KubeError(failure(500, "InternalError", `Internal error occurred: ${why}`, { causes: [{ message: why }] }));
}

export function expired(message: string, continueToken: string): KubeError {
  return new KubeError(failure(410, "Expired", message, undefined, { continue: continueToken }));
}

/** One field error, as k8s.io/apimachinery/pkg/util/validation/field.Error. */
export interface FieldError {
  type: "Required" | "Invalid" | "NotSupported" | "Duplicate" | "Forbidden" | "TooLong";
  field: string;
  value?: unknown;
  detail?: string;
  supported?: string[];
}

const causeReasons: Record<FieldError["type"], string> = {
  Required: "FieldValueRequired",
  Invalid: "FieldValueInvalid",
  NotSupported: "FieldValueNotSupported",
  Duplicate: "FieldValueDuplicate",
  Forbidden: "FieldValueForbidden",
  TooLong: "FieldValueTooLong",
};

// Go's %v/%q rendering of the offending value, near enough for messages.
function renderValue(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

function fieldErrorBody(e: FieldError): string {
  switch (e.type) {
    case "Required":
      return e.detail ? `Required value: ${e.detail}` : "Required value";
    case "Invalid":
      return `Invalid value: ${renderValue(e.value)}${e.detail ? `: ${e.detail}` : ""}`;
    case "NotSupported": {
      const list = (e.supported ?? []).map((s) => JSON.stringify(s)).join(", ");
      return `Unsupported value: ${renderValue(e.value)}${list ? `: supported values: ${list}` : ""}`;
    }
    case "Duplicate":
      return `Duplicate value: ${renderValue(e.value)}`;
    case "Forbidden":
      return e.detail ? `Forbidden: ${e.detail}` : "Forbidden";
    case "TooLong":
      return `Too long: ${e.detail ?? "value is too long"}`;
  }
}

/** 422 Invalid for `Kind.group "name"`, listing every field error like NewInvalid. */
export function invalid(kind: string, group: string, name: string, errs: FieldError[]): KubeError {
  const texts = errs.map((e) => `${e.field}: ${fieldErrorBody(e)}`);
  const joined = texts.length === 1 ? (texts[0] ?? "") : `[${texts.join(", ")}]`;
  const causes: KubeStatusCause[] = errs.map((e) => ({
    reason: causeReasons[e.type],
    message: fieldErrorBody(e),
    field: e.field,
  }));
  const qualified = group ? `${kind}.${group}` : kind;
  return new KubeError(failure(422, "Invalid", `${qualified} "${name}" is invalid: ${joined}`, { name, group, kind, causes }));
}

/** The Status a fault answers with: the reason and wording the real server uses for that code. */
export function statusForCode(
  code: number,
  gr: GroupResource | null,
  name: string,
  user: string,
  verb: string,
  namespace: string,
  retryAfterSeconds: number | undefined,
): KubeError {
  const target = gr ?? { group: "", resource: "" };
  switch (code) {
    case 400:
      return badRequest("the server rejected our request for an unknown reason");
    case 401:
      return unauthorized();
    case 403:
      return forbidden(gr, name, forbiddenReason(user, verb, target, namespace));
    case 404:
      return gr && name ? notFound(gr, name) : pathNotFound();
    case 405:
      return methodNotAllowed();
    case 409:
      return conflict(target, name, "the object has been modified; please apply your changes to the latest version and try again");
    case 410:
      return new KubeError(failure(410, "Expired", "too old resource version"));
    case 422:
      return invalid("EphemeralRunner", RUNNERS.group, name, [{ type: "Invalid", field: "metadata", value: name, detail: "injected fault" }]);
    case 429:
      return tooManyRequests(retryAfterSeconds ?? 1);
    case 500:
      return internalError("injected fault");
    case 503:
      return new KubeError(
        failure(503, "ServiceUnavailable", "the server is currently unable to handle the request", {}),
        retryAfterSeconds ? { "Retry-After": String(retryAfterSeconds) } : {},
      );
    case 504:
      return new KubeError(failure(504, "Timeout", "Timeout: request did not complete within the allotted timeout", {}));
    default:
      return new KubeError(failure(code, "", `the server responded with the status code ${code}`));
  }
}

/** The RBAC authorizer's denial text (responsewriters.forbiddenMessage). */
export function forbiddenReason(user: string, verb: string, gr: GroupResource, namespace: string, sub = ""): string {
  const resource = sub ? `${gr.resource}/${sub}` : gr.resource;
  const where = namespace ? `in the namespace "${namespace}"` : "at the cluster scope";
  return `User "${user}" cannot ${verb} resource "${resource}" in API group "${gr.group}" ${where}`;
}
