// The control API under /t/{id}/__control/: tests seed state, inject faults
// and read what the product did. Not part of GitHub's API.
import {
  addDelivery,
  addInstallation,
  deliveriesNewestFirst,
  deliveryView,
  putJob,
  putRun,
  rateLimitState,
  removeInstallation,
  suspendInstallation,
  StandinError,
  type Tenant,
} from "./store.ts";
import { addManifestCode } from "./manifest.ts";
import type { DeliveryInput, FaultInput, InstallationInput, Json, JobInput, RunInput } from "./types.ts";

export type ControlAnswer = { status: number; body: Json };

function objectBody(body: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = body.trim() === "" ? {} : JSON.parse(body);
  } catch {
    throw new StandinError(400, "body is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new StandinError(400, "body must be a JSON object");
  return value as Record<string, unknown>;
}

function optionalNumber(body: Record<string, unknown>, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new StandinError(400, `${name} must be a non-negative number`);
  return value;
}

function faultFrom(body: Record<string, unknown>): FaultInput {
  const match = body.match;
  if (match !== undefined && (typeof match !== "object" || match === null || Array.isArray(match))) {
    throw new StandinError(400, "match must be an object");
  }
  const m = (match ?? {}) as Record<string, unknown>;
  if ((m.method !== undefined && typeof m.method !== "string") || (m.pathIncludes !== undefined && typeof m.pathIncludes !== "string")) {
    throw new StandinError(400, "match.method and match.pathIncludes must be strings");
  }
  const fault: FaultInput = {
    match: { method: m.method as string | undefined, pathIncludes: m.pathIncludes as string | undefined },
    status: optionalNumber(body, "status"),
    retryAfterSeconds: optionalNumber(body, "retryAfterSeconds"),
    rateLimitResetInSeconds: optionalNumber(body, "rateLimitResetInSeconds"),
    delayMs: optionalNumber(body, "delayMs"),
    times: optionalNumber(body, "times"),
  };
  if (typeof body.message === "string") fault.message = body.message;
  for (const key of ["rawBody", "contentType", "location"] as const) {
    const value = body[key];
    if (value === undefined) continue;
    if (typeof value !== "string") throw new StandinError(400, `${key} must be a string`);
    fault[key] = value;
  }
  return fault;
}

export function handleControl(tenant: Tenant, method: string, path: string, rawBody: string, nextDeliveryId: () => bigint): ControlAnswer {
  const now = Date.now();
  const route = `${method} ${path}`;
  switch (route) {
    case "POST /installations":
      return { status: 201, body: addInstallation(tenant, objectBody(rawBody) as InstallationInput) };
    case "POST /uninstall":
      removeInstallation(tenant, objectBody(rawBody).id);
      return { status: 200, body: {} };
    case "POST /suspend":
    case "POST /unsuspend":
      return { status: 200, body: suspendInstallation(tenant, objectBody(rawBody).id, path === "/suspend", now) };
    case "PUT /runs":
      return { status: 200, body: putRun(tenant, objectBody(rawBody) as RunInput, now) };
    case "PUT /jobs":
      return { status: 200, body: putJob(tenant, objectBody(rawBody) as JobInput, now) };
    case "POST /deliveries":
      return { status: 201, body: deliveryView(addDelivery(tenant, nextDeliveryId(), objectBody(rawBody) as DeliveryInput, now)) };
    case "GET /deliveries":
      return { status: 200, body: deliveriesNewestFirst(tenant).map(deliveryView) };
    case "POST /faults": {
      const fault = faultFrom(objectBody(rawBody));
      tenant.faults.push({ ...fault, remaining: fault.times ?? Number.POSITIVE_INFINITY });
      return { status: 201, body: {} };
    }
    case "DELETE /faults":
      tenant.faults = [];
      return { status: 200, body: {} };
    case "GET /calls":
      return { status: 200, body: tenant.calls };
    case "DELETE /calls":
      tenant.calls = [];
      return { status: 200, body: {} };
    case "GET /token-requests":
      return { status: 200, body: tenant.tokenRequests };
    case "GET /redeliveries":
      return { status: 200, body: tenant.redeliveries };
    case "PUT /refuse-tokens": {
      const status = objectBody(rawBody).status;
      if (status !== 403 && status !== 422 && status !== null) throw new StandinError(400, "status must be 403, 422 or null");
      tenant.refuseTokens = status;
      return { status: 200, body: {} };
    }
    case "PUT /redelivery-status": {
      const code = optionalNumber(objectBody(rawBody), "statusCode");
      if (code === undefined || !Number.isInteger(code)) throw new StandinError(400, "statusCode must be an integer");
      tenant.redeliveryStatusCode = code;
      return { status: 200, body: {} };
    }
    case "PUT /deliveries-status-filter": {
      const supported = objectBody(rawBody).supported;
      if (typeof supported !== "boolean") throw new StandinError(400, "supported must be true or false");
      tenant.deliveriesStatusFilter = supported;
      return { status: 200, body: {} };
    }
    case "GET /rate-limit":
      return { status: 200, body: rateLimitState(tenant, now) };
    case "PUT /rate-limit": {
      const body = objectBody(rawBody);
      const limit = optionalNumber(body, "limit");
      const remaining = optionalNumber(body, "remaining");
      const resetIn = optionalNumber(body, "resetInSeconds");
      if (limit !== undefined) tenant.rate.limit = Math.floor(limit);
      if (resetIn !== undefined) tenant.rate.resetSeconds = Math.floor(now / 1000) + Math.max(1, Math.floor(resetIn));
      if (remaining !== undefined) tenant.rate.used = Math.max(0, tenant.rate.limit - Math.floor(remaining));
      return { status: 200, body: rateLimitState(tenant, now) };
    }
    case "POST /manifest-codes":
      try {
        return { status: 201, body: addManifestCode(tenant, objectBody(rawBody).code, now) };
      } catch (e) {
        throw new StandinError(400, e instanceof Error ? e.message : String(e));
      }
    case "GET /manifest-apps":
      return { status: 200, body: tenant.manifestApps.map((a) => ({ owner: a.owner, manifest: a.manifest as Json, state: a.state })) };
    case "POST /expire-tokens":
      for (const token of tenant.tokens.values()) token.expiresAtMs = now;
      return { status: 200, body: {} };
    default:
      return { status: 404, body: { error: `no control route ${route}` } };
  }
}
