import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { createLogger } from "vite";
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { MAX_WORKERS } from "./vitest.unit.config.ts";

const undiciShim = new URL("./src/cluster/undici-shim.ts", import.meta.url).pathname;

// The workflow parser's published sourcemaps name sources it does not ship: vite's warning about
// each of its files, once it is inlined (below), says nothing about our code.
export const logger = createLogger();
const warnOnce = logger.warnOnce.bind(logger);
logger.warnOnce = (msg, options) => {
  if (!/^Sourcemap for ".*@actions\/workflow-parser\/.*" points to missing source files$/.test(msg)) warnOnce(msg, options);
};

/**
 * The soaks and long randomized runs: minutes of the suite's time, run by `npm run test:soak`
 * (vitest.soak.config.ts, which `.ci/run` runs too), kept out of `npm test`.
 */
export const SOAKS = {
  workers: ["test/workers/**/*soak*.test.ts", "test/workers/**/*randomized*.test.ts"],
  node: ["test/node/**/*soak*.test.ts"],
};

/**
 * The Worker's own tests run inside workerd and reach the stand-in GitHub and Kubernetes servers
 * (started in Node by globalSetup) over HTTP. The test entry (test/hooks/entry.ts): the production
 * Worker with the test ledger, whose hooks (ARC_REAPER_TEST_HOOKS) let each test give its own ledger
 * its stand-in tenants' settings.
 *
 * Not isolated: every file of the project runs in one workerd per pool worker, which keeps the Worker's
 * modules loaded between files (workerd's start and the module graph's load cost about 4 s a file, 170 s of
 * the project's 255 s on 2 cores). Nothing a file leaves behind reaches the next: each env has a ledger of
 * its own by a fresh LEDGER_NAME (test/workers/support/worker.ts), and src/'s module-level maps are keyed
 * so that no two files share an entry: door-tally's pending counts by ledger name, settings-for's settings
 * by env object and test settings, verify-signature's keys by Settings object, token-cache's tokens by GitHub URL and App id (each stack's stand-in tenant has a URL
 * of its own), agent-message-fields' words by schema object.
 */
export function workersProject(name: string, include: string[], exclude: string[] = []): TestProjectInlineConfiguration {
  return {
    plugins: [
      cloudflareTest({
        main: "./test/hooks/entry.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: { bindings: { ARC_REAPER_TEST_HOOKS: "on" } },
      }),
    ],
    resolve: { alias: { undici: undiciShim } },
    test: {
      name,
      include,
      exclude: [...configDefaults.exclude, ...exclude],
      isolate: false,
      globalSetup: ["test/standins/global-setup.ts"],
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  };
}

/** Node-side tests: manifests, deploy dry run, stand-ins, demo, browser, the agent. */
export function nodeProject(name: string, include: string[], exclude: string[] = []): TestProjectInlineConfiguration {
  return {
    customLogger: logger,
    test: {
      name,
      environment: "node",
      include,
      exclude: [...configDefaults.exclude, ...exclude],
      testTimeout: 120_000,
      // GitHub's workflow parser imports its JSON schema without an import attribute, which Node refuses:
      // vite loads it instead (test/node/repo/workflows.test.ts).
      server: { deps: { inline: ["@actions/workflow-parser"] } },
    },
  };
}

// `npm test`: everything but the soaks.
export default defineConfig({
  customLogger: logger,
  test: {
    // Log lines of passing tests are noise; a failing test shows its own.
    silent: "passed-only",
    // At least two files at once: vitest's default (cores - 1) is one on a 2-core machine, and most of the node
    // project's time is spent waiting on the processes it starts (wrangler, workerd, the agent, Chromium).
    maxWorkers: MAX_WORKERS,
    projects: [
      workersProject("workers", ["test/workers/**/*.test.ts"], SOAKS.workers),
      // Pure modules (model, reaper, parsers) on plain Node: no workerd, no stand-ins; seconds.
      "./vitest.unit.config.ts",
      nodeProject("node", ["test/node/**/*.test.ts"], SOAKS.node),
    ],
  },
});
