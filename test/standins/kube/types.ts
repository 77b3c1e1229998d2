// Wire shapes shared by the Kubernetes stand-in (Node) and its control client
// (which runs inside workerd), so this file imports nothing.

import type { Mangle } from "./proxy-mangle.ts";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

import type { ArcVersion } from "./arc-versions.ts";

export const EPHEMERAL_RUNNER_GROUP = "actions.github.com";
export const EPHEMERAL_RUNNER_VERSION = "v1alpha1";
export const EPHEMERAL_RUNNER_API_VERSION = "actions.github.com/v1alpha1";
export const EPHEMERAL_RUNNER_KIND = "EphemeralRunner";
export const EPHEMERAL_RUNNER_PLURAL = "ephemeralrunners";

/** The finalizers ARC 0.14.2's EphemeralRunner controller puts on every runner. */
export const EPHEMERAL_RUNNER_FINALIZERS: readonly string[] = [
  "ephemeralrunner.actions.github.com/finalizer",
  "ephemeralrunner.actions.github.com/runner-registration-finalizer",
];

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

/** `status` of an EphemeralRunner as ARC's controller and listener write it. */
export interface EphemeralRunnerStatus {
  failures?: Record<string, string>;
  jobDisplayName?: string;
  jobId?: string;
  jobRepositoryName?: string;
  jobRequestId?: number;
  jobWorkflowRef?: string;
  message?: string;
  phase?: string;
  ready?: boolean;
  reason?: string;
  runnerId?: number;
  runnerName?: string;
  workflowRunId?: number;
}

/** A container of the runner pod template; the CRD holds the full core/v1 PodSpec. */
export interface PodContainer {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string }[];
  [field: string]: unknown;
}

export interface EphemeralRunnerSpec {
  githubConfigUrl: string;
  githubConfigSecret: string;
  runnerScaleSetId: number;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
  };
  spec: { containers: PodContainer[]; restartPolicy?: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** What a test may seed: metadata.name may be left to generateName. */
export interface EphemeralRunnerInput {
  apiVersion: typeof EPHEMERAL_RUNNER_API_VERSION;
  kind: typeof EPHEMERAL_RUNNER_KIND;
  metadata: ObjectMeta;
  spec: EphemeralRunnerSpec;
  status?: EphemeralRunnerStatus;
}

/** An EphemeralRunner with its name and namespace (as makeEphemeralRunner builds it). */
export interface EphemeralRunner extends EphemeralRunnerInput {
  metadata: ObjectMeta & { name: string; namespace: string };
}

/** An EphemeralRunner as the server stores and returns it: the system fields are always set. */
export interface StoredEphemeralRunner extends EphemeralRunner {
  metadata: ObjectMeta & {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    generation: number;
  };
}

/** metav1.Status as the API server sends it. */
export interface KubeStatusCause {
  reason?: string;
  message?: string;
  field?: string;
}
export interface KubeStatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: KubeStatusCause[];
  retryAfterSeconds?: number;
}
export interface KubeStatus {
  kind: "Status";
  apiVersion: "v1";
  metadata: { continue?: string; resourceVersion?: string };
  status: "Success" | "Failure";
  message?: string;
  reason?: string;
  details?: KubeStatusDetails;
  code?: number;
}

/** rbac.authorization.k8s.io/v1 PolicyRule (resource rules only). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/**
 * A RoleBinding (`namespace`: the rules apply only in that namespace) or a
 * ClusterRoleBinding (`clusterWide: true`: everywhere, including cluster-scope lists).
 */
export type RbacBinding = { namespace: string; rules: PolicyRule[] } | { clusterWide: true; rules: PolicyRule[] };

export interface ServiceAccountSpec {
  name: string;
  namespace: string;
  token: string;
  bindings: RbacBinding[];
}

export interface KubeFault {
  /**
   * Applies to API calls (never the control API); `pathIncludes` is matched against the path below the tenant's base URL,
   * without the query; `verb` against the RBAC verb (get, list, watch, delete, ...), which tells a watch from a list.
   */
  match: { method?: string; pathIncludes?: string; verb?: string };
  /** Answer with this HTTP status and the matching Status reason instead of the real answer. */
  status?: number;
  /** Sent as Retry-After (and details.retryAfterSeconds); 429 defaults to 1. */
  retryAfterSeconds?: number;
  /** Wait this long before answering; alone, the real answer follows the wait. */
  delayMs?: number;
  /** Destroy the connection (after any delay) without answering. */
  dropConnection?: boolean;
  /** Answer with this raw body (status defaults to 200), e.g. to test unreadable answers. */
  rawBody?: string;
  /** Send the real answer as a broken proxy would change it (proxy-mangle.ts). */
  mangle?: Mangle;
  /** How many matching requests this fault applies to; unlimited when absent. */
  times?: number;
}

export interface KubeFaultState extends KubeFault {
  id: number;
  /** Matches left; null means unlimited. */
  remaining: number | null;
  /** Requests it has matched so far (taken as they arrive: a delayed one counts while it is held). */
  taken: number;
}

export interface KubeCall {
  seq: number;
  time: string;
  method: string;
  /** Path below the tenant's base URL, e.g. /apis/actions.github.com/v1alpha1/namespaces/x/ephemeralrunners. */
  path: string;
  query: Record<string, string>;
  /** HTTP status sent; 0 when no answer was sent (dropped connection, client gone, server closing). */
  status: number;
  /** "admin" for the tenant's admin token, system:serviceaccount:NS:NAME for a service account, null if unauthenticated. */
  user: string | null;
  auth: "admin" | "serviceaccount" | "missing" | "invalid";
  /** The request's JSON body if any (e.g. DeleteOptions); never headers or tokens. */
  body?: Json;
  contentType?: string;
  faultId?: number;
  /** The real answer went out as a broken proxy changed it (a fault's mangle). */
  mangled?: Mangle;
  durationMs: number;
}

export interface KubeTenantInfo {
  id: string;
  baseUrl: string;
  adminToken: string;
}

export interface KubeTenantSettings {
  namespaces: string[] | null;
  autoFinalize: boolean;
  /** Whose EphemeralRunner CRD the tenant serves and validates against. */
  arcVersion: ArcVersion;
  /** GitHub says each busy runner's job still runs: autoFinalize holds their deletions. */
  jobsStillRunning: boolean;
  /** A watch that asked for bookmarks (allowWatchBookmarks=true) gets one this often (kube-apiserver: about a minute). */
  bookmarkEveryMs: number;
  /** A list or get that accepts only a Table is refused (406), as by an API server without the Table handler. */
  refuseTables: boolean;
  /** Printer columns left out of the Tables served, as an older CRD would lack them. */
  tableColumnsWithout: string[];
}

export interface KubeTenantState extends KubeTenantSettings {
  resourceVersion: string;
  items: StoredEphemeralRunner[];
  serviceAccounts: { user: string; bindings: RbacBinding[] }[];
  faults: KubeFaultState[];
  /** Deletions autoFinalize holds while jobsStillRunning is on. */
  heldDeletions: ObjectRef[];
}

export interface ObjectRef {
  namespace: string;
  name: string;
}
