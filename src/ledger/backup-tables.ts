// What a backup of the ledger holds (GET /admin/backup), and what it leaves out and why.
// Every table of src/ledger/schema.ts is in one of the two lists (test/unit/ledger/backup.test.ts
// checks it against a fresh ledger's tables), so a new table is a decision, not an accident.

/** The tables a backup holds whole, in the order a restore writes them. */
export const BACKED_UP = [
  "runners",
  "runs",
  "unseen",
  "deletions",
  "failed_runners",
  "finish_refusals",
  "failed_delete_backoff",
  "redeliveries",
  "deliveries_received",
  "hourly_outcomes",
  "counters",
  "memory",
] as const;

export type BackedUpTable = (typeof BACKED_UP)[number];

/** The tables left out, each with why: nothing secret leaves the ledger, nothing that belongs to one server's connections. */
export const LEFT_OUT: Readonly<Record<string, string>> = {
  sessions: "admin sessions: hashes of cookie ids and of the ADMIN_TOKEN they were made with; log in again",
  login_failures: "the login throttle: client addresses, kept a minute",
  agent_view: "each agent's view of its cluster: the agent sends a whole snapshot when it connects to the restored ledger, which holds its runners until then",
  agent_snapshot: "a snapshot still arriving",
  agent_removed: "the agent's recent removals, which its next whole snapshot supersedes",
  agent_namespaces: "how whole each agent namespace was: restored without the view it dates, a namespace could read as whole and empty",
  github_validators:
    "conditional requests' validators and summaries of GitHub's answers: a cache, refilled by the next 200s; its ETags belong to tokens of the server that took the backup",
  schema_version: "the backup's first line names it",
};

/** Memory keys left out: a live agent connection's id (of the server that took the backup) and the test ledger's settings. */
export const leftOutMemoryKey = (key: string): boolean => key.startsWith("agent-conn:") || key === "test-settings";

/**
 * The tables whose rows are facts a delivery or a deletion wrote: a ledger with a row in any of them is not
 * empty, and a restore refuses it. What a fresh ledger's first sweeps learn on their own (unseen busy runners,
 * Failed runners seen, redelivery asks, memory, counters) is replaced by the backup's.
 */
export const FACT_TABLES = ["runners", "runs", "deliveries_received", "deletions", "hourly_outcomes"] as const satisfies readonly BackedUpTable[];
