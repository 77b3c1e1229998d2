// GET /healthz/deep: tries each dependency the sweep needs and says in words
// which failed. Each namespace can be listed (direct mode), a token can be
// minted for each installation the ledger knows, and the App's webhook
// deliveries can be listed (one page). Runs in the ledger, with the same
// cluster and GitHub clients the sweep uses, but a token cache of its own so
// that every installation is really minted for.
import type { ClusterIdentity } from "../model/cluster-identity.ts";
import type { Cluster } from "../cluster/ephemeral-runners.ts";
import type { ClusterSettings } from "../config/settings.ts";
import type { Github } from "../github/github-client.ts";
import { errorText } from "../model/error-text.ts";
import { networkReasonOf } from "../net/network-reason-of.ts";
import { FINISH_OVERLAY_COMMAND } from "../reaper/finish-stuck.ts";
import type { ListShapeNote } from "../model/list-shape.ts";
import { sweepCheck, type SweepState } from "./sweep-check.ts";

interface HealthCheck {
  name: string;
  ok: boolean;
  detail: string;
  /** A failed check that got no answer: why, as a code (DnsFailure, TlsFailure, ConnectionFailed, Timeout, ...; src/net/network-cause.ts). */
  reason?: string;
}

export interface DeepHealth {
  ok: boolean;
  checks: HealthCheck[];
}

export interface KnownInstallation {
  id: number;
  /** The repositories the ledger remembers it for (may be empty when known only from open runners). */
  repos: string[];
}

/** At most this many installations are minted for in one check; the rest are named as not checked. */
const MAX_INSTALLATIONS_CHECKED = 20;

export interface DeepHealthDeps {
  cluster: ClusterSettings;
  namespaces: string[];
  /** Every watched cluster (direct: one; agent: AGENT_CLUSTERS, connected, known). */
  clusters: readonly { name: string; cluster: Cluster }[];
  /** Agent mode: the clusters whose agents are connected now. */
  connected?: readonly string[];
  github: Github | Error;
  installations: KnownInstallation[];
  /** REAPER_FINISH_STUCK: the held deletions whose finish the API server refused (403); absent when the setting is off. */
  finishRefused?: readonly { name: string; namespace: string; cluster: string; why: string }[];
  /** Direct mode: the cluster's note of a fallback to full objects (src/model/list-shape.ts), read after it was listed; absent: agent mode. */
  listShape?: (cluster: string) => ListShapeNote | undefined;
  /** The clusters where ARC's runner ids were seen to match GitHub's, and since when (ms). */
  runnerIdsMatch?: Readonly<Record<string, number>>;
  /** What each cluster name points at (its kube-system uid), and when it last changed. */
  clusterIdentities?: Readonly<Record<string, ClusterIdentity>>;
  /** When the last sweep completed and what drives it (src/health/sweep-check.ts). */
  sweep?: SweepState;
}

/** How a direct-mode cluster lists: as Tables, or as full objects since it fell back, and why. */
function shapeWords(deps: DeepHealthDeps, cluster: string): string {
  if (!deps.listShape) return "";
  const note = deps.listShape(cluster);
  return note ? ` as full objects since ${new Date(note.since).toISOString()} (Tables refused: ${note.why}; tried again a day after)` : " as Tables";
}

async function attempt(name: string, run: () => Promise<string>): Promise<HealthCheck> {
  try {
    return { name, ok: true, detail: await run() };
  } catch (e) {
    const reason = networkReasonOf(e);
    return { name, ok: false, detail: errorText(e), ...(reason ? { reason } : {}) };
  }
}

export async function deepHealth(deps: DeepHealthDeps): Promise<DeepHealth> {
  const agents = agentClustersCheck(deps);
  const checks: Promise<HealthCheck>[] = [
    ...namespaceChecks(deps),
    ...(agents ? [Promise.resolve(agents)] : []),
    ...githubChecks(deps.github, deps.installations),
  ];
  if (deps.finishRefused) checks.push(Promise.resolve(finishCheck(deps.finishRefused)));
  checks.push(Promise.resolve(runnerIdsCheck(deps.clusters, deps.runnerIdsMatch ?? {})));
  checks.push(Promise.resolve(identityCheck(deps.clusters, deps.clusterIdentities ?? {})));
  if (deps.sweep) checks.push(Promise.resolve(sweepCheck(deps.sweep)));
  const done = await Promise.all(checks);
  return { ok: done.every((c) => c.ok), checks: done };
}

/** Each watched namespace listed, in each cluster. */
function namespaceChecks(deps: DeepHealthDeps): Promise<HealthCheck>[] {
  const checks: Promise<HealthCheck>[] = [];
  // In agent mode the cluster is the agent's view: a namespace lists only while an agent is connected with a complete snapshot.
  const via = deps.cluster.mode === "agent" ? " (the agent's view)" : "";
  const several = deps.clusters.length > 1;
  for (const { name, cluster } of deps.clusters) {
    for (const ns of deps.namespaces) {
      const place = several ? `cluster ${name} namespace ${ns}` : `namespace ${ns}`;
      checks.push(
        attempt(`${place}${via}`, async () => {
          const runners = await cluster.listRunners(ns);
          return `listed ${runners.length} EphemeralRunner${runners.length === 1 ? "" : "s"} in ${several ? `${name}/` : ""}${ns}${via}${shapeWords(deps, name)}`;
        }),
      );
    }
  }
  return checks;
}

/** Agent mode with AGENT_CLUSTERS: every expected cluster's agent connected, and none connected that is not expected. */
function agentClustersCheck(deps: DeepHealthDeps): HealthCheck | undefined {
  if (deps.cluster.mode !== "agent" || deps.cluster.expectedClusters.length === 0) return undefined;
  const connected = new Set(deps.connected ?? []);
  const expected = deps.cluster.expectedClusters;
  const missing = expected.filter((c) => !connected.has(c));
  // A cluster served but not expected is watched only while its agent is connected: once it leaves,
  // its runners are no longer looked for, so the operator must list it (or retire its agent).
  const unexpected = [...connected].filter((c) => !expected.includes(c));
  const problems = [
    ...(missing.length > 0 ? [`no agent connected for ${missing.join(", ")}`] : []),
    ...(unexpected.length > 0
      ? [`connected but not in AGENT_CLUSTERS: ${unexpected.join(", ")} (list it, or its runners go unwatched once its agent leaves)`]
      : []),
  ];
  const detail =
    problems.length === 0
      ? `every cluster of AGENT_CLUSTERS has its agent connected: ${expected.join(", ")}`
      : `AGENT_CLUSTERS expects ${expected.join(", ")}; ${problems.join("; ")}`;
  return { name: "agent clusters", ok: problems.length === 0, detail };
}

/** A token minted per known installation (at most MAX_INSTALLATIONS_CHECKED), and one page of deliveries listed. */
function githubChecks(github: DeepHealthDeps["github"], installations: DeepHealthDeps["installations"]): Promise<HealthCheck>[] {
  if (github instanceof Error) return [Promise.resolve({ name: "github", ok: false, detail: `the GitHub client could not be made: ${github.message}` })];
  const checks: Promise<HealthCheck>[] = [];
  const shown = installations.slice(0, MAX_INSTALLATIONS_CHECKED);
  if (installations.length === 0) {
    checks.push(Promise.resolve({ name: "installations", ok: true, detail: "no installation known yet: the ledger learns them from webhooks" }));
  }
  for (const inst of shown) {
    const of = inst.repos.length > 0 ? ` (${inst.repos.slice(0, 3).join(", ")}${inst.repos.length > 3 ? `, ${inst.repos.length - 3} more` : ""})` : "";
    checks.push(
      attempt(`installation ${inst.id}`, async () => {
        await github.installationToken(inst.id);
        return `minted a token for installation ${inst.id}${of}`;
      }),
    );
  }
  if (installations.length > shown.length) {
    checks.push(Promise.resolve({ name: "installations", ok: true, detail: `${installations.length - shown.length} more installations not checked here` }));
  }
  checks.push(
    attempt("deliveries", async () => {
      const page = await github.deliveriesSince(0, { stop: () => true });
      return `listed ${page.deliveries.length} webhook deliver${page.deliveries.length === 1 ? "y" : "ies"} (one page)`;
    }),
  );
  return checks;
}

/** REAPER_FINISH_STUCK is on: a 403 on the finish patch means the optional Role overlay is not applied. */
function finishCheck(refused: NonNullable<DeepHealthDeps["finishRefused"]>): HealthCheck {
  if (refused.length === 0) return { name: "finish stuck", ok: true, detail: "REAPER_FINISH_STUCK is on; no finish was refused" };
  const first = refused[0]!;
  return {
    name: "finish stuck",
    ok: false,
    detail: `removing ARC's finalizers was refused for ${refused.length} held deletion${refused.length === 1 ? "" : "s"} (${first.cluster}/${first.namespace}/${first.name}: ${first.why}): the Role lacks patch on ephemeralrunners; apply the overlay: ${FINISH_OVERLAY_COMMAND}`,
  };
}

/**
 * Identity by runner id holds in a cluster only once an object of a job's runner name was seen carrying the
 * job's runner_id; until then another id rules nothing out. Informational: a new deployment has seen no job.
 */
function runnerIdsCheck(clusters: DeepHealthDeps["clusters"], matched: Readonly<Record<string, number>>): HealthCheck {
  const parts = clusters.map(({ name }) => {
    const since = matched[name];
    const who = clusters.length > 1 ? `cluster ${name}: ` : "";
    return since !== undefined
      ? `${who}ARC's runner ids match GitHub's (seen ${new Date(since).toISOString()}): a job's runner is named by its id`
      : `${who}ARC's runner ids not yet seen matching GitHub's: identity by name, run and uid only, another id rules nothing out`;
  });
  return { name: "runner ids", ok: true, detail: parts.join("; ") };
}

/** What each cluster name points at (its kube-system uid): "runner ids match" is known per identity. Unknown is safe (no id trusted): ok. */
function identityCheck(clusters: DeepHealthDeps["clusters"], identities: Readonly<Record<string, ClusterIdentity>>): HealthCheck {
  const parts = clusters.map(({ name }) => `${clusters.length > 1 ? `cluster ${name}: ` : ""}${identityWords(identities[name])}`);
  return { name: "cluster identity", ok: true, detail: parts.join("; ") };
}

/** What the cluster name points at, in words: its identity, or why it is unknown, and its last change. */
function identityWords(identity: ClusterIdentity | undefined): string {
  if (!identity) return "not read yet (no runner id trusted until it is)";
  const what = identity.uid !== undefined ? `kube-system uid ${identity.uid}` : `unknown: ${identity.why ?? "not said"} (no runner id trusted)`;
  const changed =
    identity.changedAt !== undefined && identity.previous !== undefined
      ? `; changed ${new Date(identity.changedAt).toISOString()} from ${identity.previous}: what was known of its runner ids was forgotten`
      : "";
  return `${what}${changed}`;
}
