// The layout's import rules (docs/design.md, "Layout and its import rules"), checked in CI by `npm run lint:imports`.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    // A type-only import (the Durable Object class in the env's binding type) is no circle at run time.
    { name: "no-circular", severity: "error", comment: "No import circles.", from: {}, to: { circular: true, dependencyTypesNot: ["type-only"] } },
    {
      name: "model-is-the-ground-floor",
      severity: "error",
      comment: "src/model imports nothing of ours outside itself.",
      from: { path: "^src/model/" },
      to: { path: "^src/", pathNot: "^src/model/" },
    },
    {
      name: "reaper-imports-no-storage",
      severity: "error",
      comment: "src/reaper decides: it never imports the ledger (storage), HTTP or the Worker entry.",
      from: { path: "^src/reaper/" },
      to: { path: "^src/(ledger|http|admin|index\\.ts)" },
    },
    {
      name: "ledger-imports-no-decision",
      severity: "error",
      comment:
        "src/ledger stores: only its facade (ledger.ts, and its one pass in ledger-pass.ts) wires the reaper in (the transition and the facts' schedule come in through LedgerOptions); the tables import no value of the reaper.",
      from: { path: "^src/ledger/", pathNot: "^src/ledger/ledger(-pass)?\\.ts$" },
      to: { path: "^src/reaper/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "ledger-types-from-the-ports",
      severity: "error",
      comment:
        "The tables use the reaper's types only from the modules that define what crosses to the ledger: its ports, log lines, reconcile's result, the transition, the next look's cases, a deletion check, the deliveries mark and the pass's report.",
      from: { path: "^src/ledger/", pathNot: "^src/ledger/ledger(-pass)?\\.ts$" },
      to: { path: "^src/reaper/", pathNot: "^src/reaper/(ports|log-lines|reconcile|transition|next-look|check-deletion|redeliver-failed|run-pass)\\.ts$" },
    },
    {
      name: "reaper-imports-no-agent-link",
      severity: "error",
      comment: "src/reaper sees the agent only through the cluster interface (src/cluster/agent-cluster.ts), never its link.",
      from: { path: "^src/reaper/" },
      to: { path: "^src/agent-link/" },
    },
    {
      name: "agent-link-wired-by-the-facade",
      severity: "error",
      comment:
        "Of the ledger, only its facade (ledger.ts) wires the agent's link in; the tables never import it (its types only: the admin RpcTarget answers its statuses).",
      from: { path: "^src/ledger/", pathNot: "^src/ledger/ledger\\.ts$" },
      to: { path: "^src/agent-link/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "agent-link-decides-nothing",
      severity: "error",
      comment: "src/agent-link carries messages and stores the view: it never imports the reaper, HTTP, the admin pages or the agent (Node).",
      from: { path: "^src/agent-link/" },
      to: { path: "^src/(reaper|http|admin|agent)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // TypeScript 7 has no compiler API yet that dependency-cruiser can use: swc parses the sources.
    parser: "swc",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};
