// Typed client for the stand-in GitHub's control API. Runs inside workerd as well
// as in Node, so it uses only the global fetch and imports nothing from node:.
import type {
  CallRecord,
  Delivery,
  DeliveryInput,
  FaultInput,
  Installation,
  InstallationInput,
  JobInput,
  RateLimitState,
  Redelivery,
  RunInput,
  TenantInfo,
  TenantOptions,
  TokenRequest,
  WorkflowJob,
  WorkflowRun,
} from "./types.ts";

export type * from "./types.ts";

export type GithubTenant = TenantInfo & {
  /** Seed an installation covering some repositories, with its granted permissions. */
  addInstallation(input: InstallationInput): Promise<Installation>;
  /** Uninstall the App from that installation: it is gone (404 on a mint) and its tokens are revoked (401). */
  uninstall(id: number): Promise<void>;
  /** The account suspends the installation (it stays, with suspended_at; no token is minted), or lifts the suspension. */
  suspend(id: number): Promise<Installation>;
  unsuspend(id: number): Promise<Installation>;
  /** Upsert one attempt of a run; answers the run as GET .../actions/runs/{id}/attempts/{n} would. */
  putRun(input: RunInput): Promise<WorkflowRun>;
  /** Upsert a job (creating its run attempt when missing); answers the full job object. */
  putJob(input: JobInput): Promise<WorkflowJob>;
  /** Seed a webhook delivery; its id (above 2^53) comes back as a string. */
  addDelivery(input: DeliveryInput): Promise<Delivery>;
  /** All deliveries, newest first, including those appended by redeliveries. */
  deliveries(): Promise<Delivery[]>;
  addFault(fault: FaultInput): Promise<void>;
  clearFaults(): Promise<void>;
  /** Every API call in arrival order; status is 0 while a (delayed) answer is pending. */
  calls(): Promise<CallRecord[]>;
  clearCalls(): Promise<void>;
  tokenRequests(): Promise<TokenRequest[]>;
  redeliveries(): Promise<Redelivery[]>;
  /** Make access_tokens refuse (403 or 422, GitHub's missing-permission message) until set to null. */
  setRefuseTokens(status: 403 | 422 | null): Promise<void>;
  /** Status code the App "answered" to redeliveries made from now on (default 200). */
  setRedeliveryStatus(statusCode: number): Promise<void>;
  /** false: the deliveries listing answers 422 to `status`, as an older GitHub Enterprise Server does. */
  setDeliveriesStatusFilter(supported: boolean): Promise<void>;
  rateLimit(): Promise<RateLimitState>;
  setRateLimit(input: { limit?: number; remaining?: number; resetInSeconds?: number }): Promise<RateLimitState>;
  /** Expire every installation token minted so far (they then answer 401 Bad credentials). */
  expireTokens(): Promise<void>;
  /** A code as GitHub's manifest flow hands the browser: POST /app-manifests/{code}/conversions takes it once, within an hour. */
  addManifestCode(code: string): Promise<void>;
  /** Every App made through the web's manifest form (web.ts), in order: its owner (null: a user's) and manifest. */
  manifestApps(): Promise<Array<{ owner: string | null; manifest: Record<string, unknown>; state: string | null }>>;
};

async function call<T>(url: string, method: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.headers = { "content-type": "application/json" };
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  const text = await response.text();
  if (!response.ok) throw new Error(`github stand-in control ${method} ${url}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Creates an isolated tenant (one GitHub App) on the stand-in at standinUrl. */
export async function createGithubTenant(standinUrl: string, opts: TenantOptions = {}): Promise<GithubTenant> {
  const info = await call<TenantInfo>(`${standinUrl.replace(/\/$/, "")}/__tenants`, "POST", opts);
  const control = info.controlUrl;
  const done = async (promise: Promise<unknown>): Promise<void> => {
    await promise;
  };
  return {
    ...info,
    addInstallation: (input) => call(`${control}/installations`, "POST", input),
    uninstall: (id) => done(call(`${control}/uninstall`, "POST", { id })),
    suspend: (id) => call(`${control}/suspend`, "POST", { id }),
    unsuspend: (id) => call(`${control}/unsuspend`, "POST", { id }),
    putRun: (input) => call(`${control}/runs`, "PUT", input),
    putJob: (input) => call(`${control}/jobs`, "PUT", input),
    addDelivery: (input) => call(`${control}/deliveries`, "POST", input),
    deliveries: () => call(`${control}/deliveries`, "GET"),
    addFault: (fault) => done(call(`${control}/faults`, "POST", fault)),
    clearFaults: () => done(call(`${control}/faults`, "DELETE")),
    calls: () => call(`${control}/calls`, "GET"),
    clearCalls: () => done(call(`${control}/calls`, "DELETE")),
    tokenRequests: () => call(`${control}/token-requests`, "GET"),
    redeliveries: () => call(`${control}/redeliveries`, "GET"),
    setRefuseTokens: (status) => done(call(`${control}/refuse-tokens`, "PUT", { status })),
    setRedeliveryStatus: (statusCode) => done(call(`${control}/redelivery-status`, "PUT", { statusCode })),
    setDeliveriesStatusFilter: (supported) => done(call(`${control}/deliveries-status-filter`, "PUT", { supported })),
    rateLimit: () => call(`${control}/rate-limit`, "GET"),
    setRateLimit: (input) => call(`${control}/rate-limit`, "PUT", input),
    expireTokens: () => done(call(`${control}/expire-tokens`, "POST")),
    addManifestCode: (code) => done(call(`${control}/manifest-codes`, "POST", { code })),
    manifestApps: () => call(`${control}/manifest-apps`, "GET"),
  };
}
