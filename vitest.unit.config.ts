import { defineConfig } from "vitest/config";

// The unit project alone: pure modules (model, reaper, parsers) on plain Node, no workerd, no stand-ins; seconds.
// vitest.config.ts includes it as a project; StrykerJS (stryker.config.json) runs it on its own.
export default defineConfig({
  test: {
    name: "unit",
    environment: "node",
    include: ["test/unit/**/*.test.ts"],
  },
});
