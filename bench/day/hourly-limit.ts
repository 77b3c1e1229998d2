// GitHub's primary rate limit for an installation: 5,000 requests an hour.
// Modelled as fixed one-hour windows from the day's start. A 304 (a
// conditional request whose answer did not change) is a request made but not
// counted against it: byHour counts what GitHub counts, requestsByHour all.
export const GITHUB_REQUESTS_PER_HOUR = 5_000;

export class GithubCalls {
  /** Requests GitHub counts against the primary limit, per hour of the day. */
  readonly byHour: number[] = [];
  /** Every request made (304s too), per hour of the day. */
  readonly requestsByHour: number[] = [];
  /** Every request made, by kind; and the 304s among them. */
  readonly byKind: Record<string, number> = {};
  readonly notModifiedByKind: Record<string, number> = {};
  refused = 0;
  private readonly limit: number;

  constructor(limit = GITHUB_REQUESTS_PER_HOUR) {
    this.limit = limit;
  }

  /** Spends one request at t (ms since the day's start) if the hour has any left; a 304 (`notModified`) spends none of the hour's. */
  take(t: number, kind: string, notModified = false): boolean {
    const hour = Math.floor(t / 3_600_000);
    const used = this.byHour[hour] ?? 0;
    if (used >= this.limit) {
      this.refused++;
      return false;
    }
    if (notModified) this.notModifiedByKind[kind] = (this.notModifiedByKind[kind] ?? 0) + 1;
    else this.byHour[hour] = used + 1;
    this.requestsByHour[hour] = (this.requestsByHour[hour] ?? 0) + 1;
    this.byKind[kind] = (this.byKind[kind] ?? 0) + 1;
    return true;
  }
}
