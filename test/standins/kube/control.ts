// Typed client for the Kubernetes stand-in's control API. Tests inside workerd
// import it, so it uses only global fetch and imports nothing from node:.
import { ACTIONABLE_REVISION_ANNOTATION, ARC_BEHAVIOUR, DEFAULT_ARC_VERSION, type ArcVersion } from "./arc-versions.ts";
import {
  EPHEMERAL_RUNNER_API_VERSION,
  EPHEMERAL_RUNNER_KIND,
  type EphemeralRunner,
  type EphemeralRunnerInput,
  type EphemeralRunnerStatus,
  type KubeCall,
  type KubeFault,
  type KubeFaultState,
  type KubeStatus,
  type KubeTenantInfo,
  type KubeTenantSettings,
  type KubeTenantState,
  type ObjectRef,
  type PolicyRule,
  type RbacBinding,
  type ServiceAccountSpec,
  type StoredEphemeralRunner,
} from "./types.ts";

export * from "./types.ts";
export * from "./arc-versions.ts";

/** A failed control call; `status` is the stand-in's Kubernetes Status body when it sent one. */
export class KubeControlError extends Error {
  readonly code: number;
  readonly status: KubeStatus | undefined;
  constructor(code: number, message: string, status: KubeStatus | undefined) {
    super(message);
    this.name = "KubeControlError";
    this.code = code;
    this.status = status;
  }
}

async function call<T>(url: string, init: { method: string; token?: string; body?: unknown }): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (init.token) headers["Authorization"] = `Bearer ${init.token}`;
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(url, {
    method: init.method,
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const status = typeof parsed === "object" && parsed !== null && (parsed as { kind?: unknown }).kind === "Status" ? (parsed as KubeStatus) : undefined;
    throw new KubeControlError(res.status, `kube stand-in ${init.method} ${url}: ${res.status} ${status?.message ?? text.slice(0, 500)}`, status);
  }
  return parsed as T;
}

export interface KubeTenantOptions {
  /** Namespaces that exist; seeding elsewhere fails with 404. Absent: any namespace exists. */
  namespaces?: string[];
  /** Play ARC's controller: an object marked for deletion through the API loses its finalizers at once. */
  autoFinalize?: boolean;
  /** Whose EphemeralRunner CRD to serve and validate against (test/fixtures/arc); default 0.14.2. */
  arcVersion?: ArcVersion;
}

export interface FinalizeOptions {
  names?: string[];
  namespace?: string;
}

const enc = encodeURIComponent;

/** One isolated fake cluster on the stand-in. */
export class KubeTenant {
  readonly id: string;
  /** Give this to the product as KUBE_API_URL. */
  readonly baseUrl: string;
  /** A bearer token allowed to do everything (KUBE_TOKEN for the happy path). */
  readonly adminToken: string;

  constructor(info: KubeTenantInfo) {
    this.id = info.id;
    this.baseUrl = info.baseUrl;
    this.adminToken = info.adminToken;
  }

  private control<T>(method: string, path: string, body?: unknown): Promise<T> {
    return call<T>(`${this.baseUrl}/__control/${path}`, { method, token: this.adminToken, body });
  }

  /** Create one EphemeralRunner as ARC would; validated against the CRD. Returns it with uid and resourceVersion. */
  async seed(runner: EphemeralRunnerInput): Promise<StoredEphemeralRunner> {
    const r = await this.control<{ items: StoredEphemeralRunner[] }>("POST", "ephemeralrunners", runner);
    const first = r.items[0];
    if (!first) throw new Error("kube stand-in seeded nothing");
    return first;
  }

  /** Create several at once (all or nothing). */
  async seedAll(runners: EphemeralRunnerInput[]): Promise<StoredEphemeralRunner[]> {
    return (await this.control<{ items: StoredEphemeralRunner[] }>("POST", "ephemeralrunners", runners)).items;
  }

  /** Replace the status (what ARC's listener does when a job starts); validated against the CRD. */
  setStatus(namespace: string, name: string, status: EphemeralRunnerStatus | null): Promise<StoredEphemeralRunner> {
    return this.control("PUT", `ephemeralrunners/${enc(namespace)}/${enc(name)}/status`, status);
  }

  /**
   * Write status as ARC does, through the API: a JSON merge patch on the status
   * subresource (the listener's HandleJobStarted, the controller's phase
   * updates), validated against the tenant's CRD like any write.
   */
  async patchStatus(namespace: string, name: string, status: EphemeralRunnerStatus): Promise<StoredEphemeralRunner> {
    const url = `${this.baseUrl}/apis/actions.github.com/v1alpha1/namespaces/${enc(namespace)}/ephemeralrunners/${enc(name)}/status?fieldValidation=Strict`;
    const res = await fetch(url, {
      method: "PATCH",
      headers: { Authorization: `Bearer ${this.adminToken}`, "Content-Type": "application/merge-patch+json", Accept: "application/json" },
      body: JSON.stringify({ status }),
    });
    const text = await res.text();
    if (!res.ok) throw new KubeControlError(res.status, `kube stand-in PATCH ${url}: ${res.status} ${text.slice(0, 500)}`, undefined);
    return JSON.parse(text) as StoredEphemeralRunner;
  }

  /** Play ARC's controller: remove the finalizers of objects being deleted, so they disappear. */
  async finalize(opts: FinalizeOptions = {}): Promise<ObjectRef[]> {
    return (await this.control<{ finalized: ObjectRef[] }>("POST", "finalize", opts)).finalized;
  }

  setAutoFinalize(autoFinalize: boolean): Promise<KubeTenantSettings> {
    return this.control("PUT", "settings", { autoFinalize });
  }

  /** Tables refused (406 with a Status, as a server without the Table handler), and/or served without these printer columns (an older CRD). */
  setTables(o: { refuse?: boolean; withoutColumns?: string[] }): Promise<KubeTenantSettings> {
    return this.control("PUT", "settings", {
      ...(o.refuse === undefined ? {} : { refuseTables: o.refuse }),
      ...(o.withoutColumns === undefined ? {} : { tableColumnsWithout: o.withoutColumns }),
    });
  }

  /** How often a watch that allows bookmarks gets one (default 60 s, as kube-apiserver); watches started after this call. */
  setBookmarkEvery(ms: number): Promise<KubeTenantSettings> {
    return this.control("PUT", "settings", { bookmarkEveryMs: ms });
  }

  /**
   * The switch "GitHub says the job runs". On: like ARC's finalizer, which gets
   * JobStillRunningError from GitHub and retries every 30 s, the stand-in keeps a
   * busy runner (status.workflowRunId) that was deleted: it stays listed and
   * readable with its deletionTimestamp, and neither autoFinalize nor finalize()
   * removes it. Off: the deletions autoFinalize held finish now; `released` names them.
   * A 0.15 tenant never holds (ARC_BEHAVIOUR finalizerFirst): its controller drops the
   * finalizer before it deregisters, so a deleted busy runner goes at once.
   */
  setJobsStillRunning(jobsStillRunning: boolean): Promise<KubeTenantSettings & { released: ObjectRef[] }> {
    return this.control("PUT", "settings", { jobsStillRunning });
  }

  /** The object as stored, or undefined if it does not exist. */
  async get(namespace: string, name: string): Promise<StoredEphemeralRunner | undefined> {
    try {
      return await this.control<StoredEphemeralRunner>("GET", `ephemeralrunners/${enc(namespace)}/${enc(name)}`);
    } catch (e) {
      if (e instanceof KubeControlError && e.code === 404) return undefined;
      throw e;
    }
  }

  /** Every object, sorted by namespace then name. */
  async list(): Promise<StoredEphemeralRunner[]> {
    return (await this.control<{ items: StoredEphemeralRunner[] }>("GET", "ephemeralrunners")).items;
  }

  /** Remove an object at once, finalizers or not (it left the cluster without the product). */
  async remove(namespace: string, name: string): Promise<void> {
    await this.control("DELETE", `ephemeralrunners/${enc(namespace)}/${enc(name)}`);
  }

  state(): Promise<KubeTenantState> {
    return this.control("GET", "state");
  }

  addFault(fault: KubeFault): Promise<KubeFaultState> {
    return this.control("POST", "faults", fault);
  }

  /** The faults still in force (a fault with `times` leaves once used up), with how many requests each has taken. */
  async faults(): Promise<KubeFaultState[]> {
    return (await this.control<{ faults: KubeFaultState[] }>("GET", "faults")).faults;
  }

  async clearFaults(): Promise<void> {
    await this.control("DELETE", "faults");
  }

  /** API calls received (oldest first), with the user that made each; tokens are never recorded. */
  async calls(): Promise<KubeCall[]> {
    return (await this.control<{ calls: KubeCall[] }>("GET", "calls")).calls;
  }

  async clearCalls(): Promise<void> {
    await this.control("DELETE", "calls");
  }

  /** Register a token limited by RBAC to exactly `bindings`. Returns its user name. */
  async addServiceAccount(sa: ServiceAccountSpec): Promise<{ user: string; token: string }> {
    const r = await this.control<{ user: string }>("POST", "serviceaccounts", sa);
    return { user: r.user, token: sa.token };
  }

  /** Forget old revisions (etcd compaction): continue tokens from earlier lists then get 410 Expired. */
  async compact(): Promise<void> {
    await this.control("POST", "compact");
  }

  /** End every open watch (as an API server restart does); clients resume from their last resourceVersion. Returns how many ended. */
  async closeWatches(): Promise<number> {
    return (await this.control<{ closed: number }>("POST", "watches/close")).closed;
  }

  /** Forget the watch history and end every open watch: each resume then gets 410 Expired and must list again. */
  async expireWatches(): Promise<number> {
    return (await this.control<{ closed: number }>("POST", "watches/expire")).closed;
  }

  /** Drop the tenant and everything in it. */
  async dispose(): Promise<void> {
    await this.control("DELETE", "tenant");
  }
}

export async function createKubeTenant(standinUrl: string, opts: KubeTenantOptions = {}): Promise<KubeTenant> {
  const info = await call<KubeTenantInfo>(`${standinUrl.replace(/\/$/, "")}/__tenants`, { method: "POST", body: opts });
  return new KubeTenant(info);
}

/** The rules arc-reaper needs in a namespace: list/get/delete EphemeralRunners (as a Role). */
export function reaperRules(): PolicyRule[] {
  return [{ apiGroups: ["actions.github.com"], resources: ["ephemeralrunners"], verbs: ["get", "list", "delete"] }];
}

/** The binding infra/kubernetes/cluster-identity grants: get on the kube-system namespace object (the cluster's identity). */
export function identityBinding(): RbacBinding {
  return { namespace: "kube-system", rules: [{ apiGroups: [""], resources: ["namespaces"], resourceNames: ["kube-system"], verbs: ["get"] }] };
}

/** A RoleBinding of `rules` in each namespace. */
export function roleBindings(namespaces: string[], rules: PolicyRule[] = reaperRules()): RbacBinding[] {
  return namespaces.map((namespace) => ({ namespace, rules }));
}

// --- realistic objects -------------------------------------------------------------

export interface MakeEphemeralRunnerOptions {
  namespace: string;
  /** ARC's scale set (AutoscalingRunnerSet) name: the `runs-on` label. */
  scaleSet: string;
  /** Default: an ARC-style generated name, `${scaleSet}-${set suffix}-runner-${5 chars}`. */
  name?: string;
  /** Default: `namespace` (the scale set lives with its runners). */
  scaleSetNamespace?: string;
  /** With a run id the runner has a job, and the listener's job fields are filled in. */
  workflowRunId?: number;
  jobRepositoryName?: string;
  jobRequestId?: number;
  jobId?: string;
  jobDisplayName?: string;
  jobWorkflowRef?: string;
  /**
   * `status.runnerId`, which ARC's controller writes (with `status.runnerName`) from the JIT config right
   * after it creates the runner, before any job; GitHub's workflow_job.runner_id is the same number.
   * Default: a fresh id, unique in this process (from 1,000,001 up: ids a test chooses should stay below).
   * null: not written yet (neither runnerId nor runnerName).
   */
  runnerId?: number | null;
  /** Default: "Running" with a run; without one, the version's idle phase ("Pending" from 0.15, ARC_BEHAVIOUR). */
  phase?: string;
  /** The runner container's image; default `ghcr.io/actions/actions-runner:latest` (its tag is the runner version when it is one). */
  runnerImage?: string;
  /** Merged over the generated status (set a key to undefined to leave it out). */
  status?: EphemeralRunnerStatus;
  githubConfigUrl?: string;
  githubConfigSecret?: string;
  runnerScaleSetId?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Default: ARC's two finalizers (the stand-in adds them when absent). */
  finalizers?: string[];
  uid?: string;
  creationTimestamp?: string;
  /** Seed an object already being deleted (needs finalizers). */
  deletionTimestamp?: string;
  /** Name of the owning EphemeralRunnerSet; default `${scaleSet}-${5 chars}`. */
  ephemeralRunnerSetName?: string;
  /** The ARC release that wrote the object (its app.kubernetes.io/version label); default 0.14.2. */
  arcVersion?: ArcVersion;
}

/**
 * The status fields ARC's listener writes when a job starts (HandleJobStarted):
 * the same set in 0.13.1, 0.14.2 and master-2026-06-30 (their CRDs declare the
 * same status). `jobId` is GitHub's job GUID, not workflow_job.id.
 */
export function jobStartedStatus(o: {
  workflowRunId: number;
  jobRepositoryName: string;
  jobRequestId?: number;
  jobId?: string;
  jobDisplayName?: string;
  jobWorkflowRef?: string;
}): EphemeralRunnerStatus {
  return {
    workflowRunId: o.workflowRunId,
    jobRepositoryName: o.jobRepositoryName,
    jobRequestId: o.jobRequestId ?? 1 + Math.floor(Math.random() * 1_000_000),
    jobId: o.jobId ?? crypto.randomUUID(),
    jobDisplayName: o.jobDisplayName ?? "build",
    jobWorkflowRef: o.jobWorkflowRef ?? `${o.jobRepositoryName}/.github/workflows/ci.yml@refs/heads/main`,
  };
}

const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789";
function suffix(): string {
  let s = "";
  for (let i = 0; i < 5; i++) s += nameAlphabet[Math.floor(Math.random() * nameAlphabet.length)];
  return s;
}

function uuid(): string {
  return crypto.randomUUID();
}

let lastRunnerId = 1_000_000;
/** A runner id no other runner made in this process has (ARC's ids are one registration each). */
export function nextRunnerId(): number {
  lastRunnerId += 1;
  return lastRunnerId;
}

/**
 * The status patch of ARC's listener when a job is assigned to a runner of `version`: from 0.15 the
 * listener owns "Running" (#4646); before, the controller set it when the pod came up. With `fields`
 * (default true) the job's fields come in the same patch; without, they come late or never (ARC #4668
 * patches from a background pool after the ack: a lost patch is a runner that never carries its run).
 */
export function listenerJobStatus(version: ArcVersion, job: Parameters<typeof jobStartedStatus>[0], o: { fields?: boolean } = {}): EphemeralRunnerStatus {
  const phase: EphemeralRunnerStatus = ARC_BEHAVIOUR[version].idlePhase === "Pending" ? { phase: "Running" } : {};
  return o.fields === false ? phase : { ...phase, ...jobStartedStatus(job) };
}

/**
 * An EphemeralRunner shaped like those ARC creates (labels, annotations, owner, pod
 * template); valid against the CRD of every version in ARC_VERSIONS.
 */
export function makeEphemeralRunner(o: MakeEphemeralRunnerOptions): EphemeralRunner {
  const setName = o.ephemeralRunnerSetName ?? `${o.scaleSet}-${suffix()}`;
  const name = o.name ?? `${setName}-runner-${suffix()}`;
  const githubConfigUrl = o.githubConfigUrl ?? "https://github.com/octo-org";
  const org = githubConfigUrl.replace(/\/+$/, "").split("/").slice(3)[0] ?? "octo-org";
  const version = o.arcVersion ?? DEFAULT_ARC_VERSION;
  const runnerId = o.runnerId === null ? undefined : (o.runnerId ?? nextRunnerId());
  const status: EphemeralRunnerStatus = {
    phase: o.phase ?? (o.workflowRunId !== undefined ? "Running" : ARC_BEHAVIOUR[version].idlePhase),
    ready: true,
  };
  if (runnerId !== undefined) {
    status.runnerId = runnerId;
    status.runnerName = name;
  }
  if (o.workflowRunId !== undefined) {
    const repo = o.jobRepositoryName ?? `${org}/octo-repo`;
    status.workflowRunId = o.workflowRunId;
    status.jobRepositoryName = repo;
    status.jobRequestId = o.jobRequestId ?? 1 + Math.floor(Math.random() * 1_000_000);
    status.jobId = o.jobId ?? uuid();
    status.jobDisplayName = o.jobDisplayName ?? "build";
    status.jobWorkflowRef = o.jobWorkflowRef ?? `${repo}/.github/workflows/ci.yml@refs/heads/main`;
  }
  const merged: Record<string, unknown> = { ...status, ...(o.status ?? {}) };
  for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];

  const runner: EphemeralRunner = {
    apiVersion: EPHEMERAL_RUNNER_API_VERSION,
    kind: EPHEMERAL_RUNNER_KIND,
    metadata: {
      name,
      namespace: o.namespace,
      generateName: `${setName}-runner-`,
      labels: {
        "actions.github.com/organization": org,
        "actions.github.com/scale-set-name": o.scaleSet,
        "actions.github.com/scale-set-namespace": o.scaleSetNamespace ?? o.namespace,
        "app.kubernetes.io/component": "runner",
        "app.kubernetes.io/part-of": "gha-runner-scale-set",
        "app.kubernetes.io/version": version,
        ...(o.labels ?? {}),
      },
      annotations: {
        "actions.github.com/patch-id": "0",
        "actions.github.com/runner-group-name": "Default",
        "actions.github.com/runner-scale-set-name": o.scaleSet,
        "actions.github.com/runner-spec-hash": suffix() + suffix(),
        ...(ARC_BEHAVIOUR[version].actionableRevision ? { [ACTIONABLE_REVISION_ANNOTATION]: "1" } : {}),
        ...(o.annotations ?? {}),
      },
      ownerReferences: [
        {
          apiVersion: EPHEMERAL_RUNNER_API_VERSION,
          kind: "EphemeralRunnerSet",
          name: setName,
          uid: uuid(),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      githubConfigUrl,
      githubConfigSecret: o.githubConfigSecret ?? `${o.scaleSet}-gha-rs-github-secret`,
      runnerScaleSetId: o.runnerScaleSetId ?? 1,
      metadata: {},
      spec: {
        containers: [
          {
            name: "runner",
            image: o.runnerImage ?? "ghcr.io/actions/actions-runner:latest",
            command: ["/home/runner/run.sh"],
            resources: {},
          },
        ],
        restartPolicy: "Never",
      },
    },
    status: merged as EphemeralRunnerStatus,
  };
  if (o.finalizers !== undefined) runner.metadata.finalizers = [...o.finalizers];
  if (o.uid !== undefined) runner.metadata.uid = o.uid;
  if (o.creationTimestamp !== undefined) runner.metadata.creationTimestamp = o.creationTimestamp;
  if (o.deletionTimestamp !== undefined) runner.metadata.deletionTimestamp = o.deletionTimestamp;
  return runner;
}
