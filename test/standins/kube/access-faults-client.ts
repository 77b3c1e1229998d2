// The test side of access-faults.ts: inject Access-style answers into a tenant
// of the Kubernetes stand-in and read what the sink received. Tests inside
// workerd import it, so it uses only fetch (the import below is types only).
import type { AccessFault, AccessFaultState, SinkCall } from "./access-faults.ts";

export type { AccessAnswer, AccessFault, AccessFaultState, SinkCall } from "./access-faults.ts";
export const ACCESS_TEAM_ORIGIN = "https://arc-reaper-standin.cloudflareaccess.com";
/** In every HTML page the stand-in sends, so a test can check that no body leaks into an error message. */
export const PAGE_SECRET = "standin-page-secret-5f1e9c";

interface TenantRef {
  baseUrl: string;
  adminToken: string;
}

async function control<T>(tenant: TenantRef, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${tenant.baseUrl}/__control/access/${path}`, {
    method,
    headers: { authorization: `Bearer ${tenant.adminToken}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`kube stand-in ${method} access/${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export function accessFaults(tenant: TenantRef) {
  return {
    add: (fault: AccessFault): Promise<AccessFaultState> => control(tenant, "POST", "faults", fault),
    clear: async (): Promise<void> => {
      await control(tenant, "DELETE", "faults");
    },
    /** What the second server (another origin) received for this tenant; its URL, and the query that marks a request as this tenant's. */
    sink: (): Promise<{ url: string; tenantQuery: string; calls: SinkCall[] }> => control(tenant, "GET", "sink"),
  };
}
