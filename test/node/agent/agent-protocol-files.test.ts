// The agent <-> ledger protocol files (src/cluster/agent-protocol.ts and its parsers) must stay
// usable in workerd: no imports but their own. A Node test, not a unit one: it reads the source
// files, which a Stryker run instruments (process.env) in its sandbox copy.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

describe("the protocol files", () => {
  it.each(["agent-protocol.ts", "agent-message-fields.ts", "parse-agent-message.ts", "parse-ledger-message.ts"])(
    "src/cluster/%s imports nothing but its siblings and valibot (usable in workerd)",
    (file) => {
      const text = readFileSync(join(ROOT, "src/cluster", file), "utf8");
      const imports = [...text.matchAll(/^\s*(?:import|export)[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]);
      // Its siblings, valibot (a production dependency, pure, bundled into the Worker and installed in the agent's image),
      // the one length rule both sides count text by, and the shapes every layer checks alike (model files: they import nothing).
      for (const spec of imports)
        expect(spec, `${file} imports ${spec}`).toMatch(/^(\.\/(agent-protocol|agent-message-fields)\.ts|\.\.\/model\/(text-length|shapes)\.ts|valibot)$/);
      expect(text).not.toMatch(/\bprocess\.|\bBuffer\b|require\(/);
    },
  );
});
