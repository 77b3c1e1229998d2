import { defineConfig } from "vitest/config";
import { logger, nodeProject, SOAKS, workersProject } from "./vitest.config.ts";

// `npm run test:soak`: the soaks and long randomized runs that `npm test` leaves out (SOAKS in
// vitest.config.ts), on the same projects' settings; `.ci/run` runs it after `npm test`. Their
// figures (the fleets' JSON lines) are printed at the end of the run, as before.
export default defineConfig({
  customLogger: logger,
  test: {
    silent: "passed-only",
    projects: [workersProject("workers-soak", SOAKS.workers), nodeProject("node-soak", SOAKS.node)],
  },
});
