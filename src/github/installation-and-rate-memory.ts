// What the GitHub client must remember beyond one isolate (installations of
// repositories, revoked installations, back-offs per scope: the ledger keeps
// them) and what an isolate may cache (installation tokens).
import type { RateLimitState } from "./call-budget.ts";
import type { Remembered, ValidatorStore } from "./conditional-read.ts";

/** What must outlive an isolate: installations of repositories and back-offs per scope. The ledger keeps it. */
export interface GithubMemory {
  /** The installation of a repository: the one its latest delivery named, or the one looked up. */
  installation(repo: string): number | undefined;
  rememberInstallation(repo: string, id: number): void;
  /** A token for the repository was refused (401): look its installation up again. */
  forgetInstallation(repo: string): void;
  /** The installation was uninstalled or suspended: forgotten for every repository, and not used again for a while. */
  revokeInstallation(id: number, until: number): void;
  installationRevoked(id: number): boolean;
  /** Until when a failed look-up of the repository's installation is not tried again (ms), or 0. */
  installationFailedUntil(repo: string): number;
  rememberInstallationFailure(repo: string, until: number): void;
  /** "app" for App (JWT) requests, the installation id for the rest. */
  rate(scope: string): RateLimitState;
}

/** Installation tokens are only a cache of the isolate; the memory is the ledger's. */
export interface GithubCache {
  tokens: Map<number, { token: string; expiresAt: number }>;
  memory: GithubMemory;
  /** What repeated GETs answered, with their validators (conditional-read.ts); the ledger keeps it. Absent: no request is conditional. */
  validators?: ValidatorStore;
}

/** A cache whose memory lives only as long as the object (for tests of the client alone). */
export function newGithubCache(): GithubCache {
  const installations = new Map<string, number>();
  const failed = new Map<string, number>();
  const blocked = new Map<string, number>();
  const revoked = new Map<number, number>();
  const remembered = new Map<string, Remembered>();
  return {
    tokens: new Map(),
    validators: {
      recall: (request) => remembered.get(request),
      remember: (request, r) => void remembered.set(request, r),
      forget: (request) => void remembered.delete(request),
    },
    memory: {
      installation: (repo) => installations.get(repo),
      rememberInstallation: (repo, id) => void installations.set(repo, id),
      forgetInstallation: (repo) => void installations.delete(repo),
      revokeInstallation: (id, until) => {
        revoked.set(id, until);
        for (const [repo, known] of installations) if (known === id) installations.delete(repo);
      },
      installationRevoked: (id) => (revoked.get(id) ?? 0) > Date.now(),
      installationFailedUntil: (repo) => failed.get(repo) ?? 0,
      rememberInstallationFailure: (repo, until) => void failed.set(repo, until),
      rate: (scope) => ({ blockedUntil: () => blocked.get(scope) ?? 0, block: (until) => void blocked.set(scope, until) }),
    },
  };
}
