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
      comment: "src/ledger stores: only its facade (ledger.ts) wires the reaper in; the tables use its types and ports only.",
      from: { path: "^src/ledger/", pathNot: "^src/ledger/ledger\\.ts$" },
      to: { path: "^src/reaper/", pathNot: "^src/reaper/(ports|log-lines|reconcile|redeliver-failed)\\.ts$", dependencyTypesNot: ["type-only"] },
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
