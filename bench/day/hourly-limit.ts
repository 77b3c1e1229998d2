// GitHub's primary rate limit for an installation: 5,000 requests an hour.
// Modelled as fixed one-hour windows from the day's start.
export const GITHUB_REQUESTS_PER_HOUR = 5_000;

export class GithubCalls {
  readonly byHour: number[] = [];
  readonly byKind: Record<string, number> = {};
  refused = 0;
  private readonly limit: number;

  constructor(limit = GITHUB_REQUESTS_PER_HOUR) {
    this.limit = limit;
  }

  /** Spends one request at t (ms since the day's start) if the hour has any left. */
  take(t: number, kind: string): boolean {
    const hour = Math.floor(t / 3_600_000);
    const used = this.byHour[hour] ?? 0;
    if (used >= this.limit) {
      this.refused++;
      return false;
    }
    this.byHour[hour] = used + 1;
    this.byKind[kind] = (this.byKind[kind] ?? 0) + 1;
    return true;
  }
}
