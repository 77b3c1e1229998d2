import { defineConfig } from "vitest/config";

// The unit project alone: pure modules (model, reaper, parsers) on plain Node, no workerd, no stand-ins; seconds.
// vitest.config.ts includes it as a project; StrykerJS (stryker.config.json) runs it on its own.
// UNIT_TESTS (comma-separated globs) narrows it, for a quick Stryker run on one file:
//   UNIT_TESTS=test/unit/reaper/judge.test.ts npx stryker run --mutate src/reaper/judge.ts
// (a lower bound of that file's score: the other unit tests may kill more).
export default defineConfig({
  test: {
    name: "unit",
    environment: "node",
    include: process.env.UNIT_TESTS ? process.env.UNIT_TESTS.split(",") : ["test/unit/**/*.test.ts"],
    // Narrowed (a Stryker run on one file): one worker reused across the mutants' runs, not a process per run.
    ...(process.env.UNIT_TESTS ? { pool: "threads", isolate: false } : {}),
  },
});
