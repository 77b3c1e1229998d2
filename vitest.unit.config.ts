import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Test files run at once in `npm test` (vitest.config.ts): one fewer than the cores, as vitest's default, but never
 * fewer than two. Here because vitest wants the same number in every project of a run, and this project's file
 * is also a config of its own (StrykerJS), which the root's imports would weigh down.
 */
export const MAX_WORKERS = Math.max(2, availableParallelism() - 1);

// The unit project alone: pure modules (model, reaper, parsers) on plain Node, no workerd, no stand-ins; seconds.
// vitest.config.ts includes it as a project; StrykerJS (stryker.config.json) runs it on its own.
// UNIT_TESTS (comma-separated globs) narrows it, for a quick Stryker run on one file:
//   UNIT_TESTS=test/unit/reaper/judge.test.ts npx stryker run --mutate src/reaper/judge.ts
// (a lower bound of that file's score: the other unit tests may kill more).
export default defineConfig({
  test: {
    name: "unit",
    environment: "node",
    maxWorkers: MAX_WORKERS,
    include: process.env.UNIT_TESTS ? process.env.UNIT_TESTS.split(",") : ["test/unit/**/*.test.ts"],
    // Pure modules keep no state between files: one module graph per worker, not one per file (91 files: 67 s
    // isolated, 10 s not, on 2 cores).
    isolate: false,
    // Narrowed (a Stryker run on one file): one worker thread reused across the mutants' runs, not a process per run.
    ...(process.env.UNIT_TESTS ? { pool: "threads" } : {}),
  },
});
