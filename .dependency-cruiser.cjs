// The layout's import rules (docs/design.md, "Layout and its import rules"), checked in CI by `npm run lint:imports`.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", comment: "No import circles, type-only ones included.", from: {}, to: { circular: true } },
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
      comment: "src/reaper decides: it never imports the store, the Durable Object, HTTP, the admin pages or the Worker entry.",
      from: { path: "^src/reaper/" },
      to: { path: "^src/(ledger|durable|http|admin|index\\.ts)" },
    },
    {
      name: "ledger-is-the-store",
      severity: "error",
      comment:
        "src/ledger stores: it imports no value of ours above src/model (the reaper's decisions come in through LedgerOptions, built in src/durable/ledger-root.ts); types of the ports are fine.",
      from: { path: "^src/ledger/" },
      to: { path: "^src/", pathNot: "^src/(ledger|model)/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "ledger-types-from-the-ports",
      severity: "error",
      comment:
        "The store uses the reaper's types only from the modules that define what crosses to it: its ports, log lines, reconcile's result, the transition, the next look's cases, a deletion check, the deliveries mark and the pass's report.",
      from: { path: "^src/ledger/" },
      to: { path: "^src/reaper/", pathNot: "^src/reaper/(ports|log-lines|reconcile|transition|next-look|check-deletion|redeliver-failed|run-pass)\\.ts$" },
    },
    {
      name: "only-durable-wires-the-reaper",
      severity: "error",
      comment:
        "Only src/durable imports both the reaper and the store: no other folder imports a value of src/reaper (src/health reads one constant of it, the finish overlay's command, and imports no storage).",
      from: { path: "^src/", pathNot: "^src/(durable|reaper|health)/" },
      to: { path: "^src/reaper/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "health-imports-no-storage",
      severity: "error",
      comment: "src/health checks what it is handed: it never imports the store or the Durable Object.",
      from: { path: "^src/health/" },
      to: { path: "^src/(ledger|durable)/" },
    },
    {
      name: "reaper-imports-no-agent-link",
      severity: "error",
      comment: "src/reaper sees the agent only through the cluster interface (src/cluster/agent-cluster.ts), never its link.",
      from: { path: "^src/reaper/" },
      to: { path: "^src/agent-link/" },
    },
    {
      name: "agent-link-wired-by-durable",
      severity: "error",
      comment: "Only src/durable wires the agent's link in; elsewhere its types only (the admin pages show its statuses).",
      from: { path: "^src/", pathNot: "^src/(durable|agent-link)/" },
      to: { path: "^src/agent-link/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "agent-link-decides-nothing",
      severity: "error",
      comment:
        "src/agent-link carries messages and stores the view: it never imports the reaper, the Durable Object, HTTP, the admin pages or the agent (Node).",
      from: { path: "^src/agent-link/" },
      to: { path: "^src/(reaper|durable|http|admin|agent)/" },
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
