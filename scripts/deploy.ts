// npm run deploy [-- wrangler deploy's flags]: `wrangler deploy`, unless it would
// replace a Worker that npm run setup made from another environment. Setup
// writes the deployment as [env.NAME] between marker lines in the config it
// names (scripts/setup/wrangler-config.ts); those markers are how this knows: a
// deploy of the top level (or another environment) whose Worker name is the
// name in such a block is refused, and the right command is named. The check
// reads the committed config, so a colleague's clone knows it as well.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { unstable_readConfig } from "wrangler";
import { setupEnvironments } from "./setup/wrangler-config.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The value of `--flag VALUE`, `--flag=VALUE` or `-f VALUE` in `argv`. */
function flag(argv: string[], long: string, short?: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    if (a === `--${long}` || (short && a === `-${short}`)) return argv[i + 1];
    if (a.startsWith(`--${long}=`)) return a.slice(long.length + 3);
  }
  return undefined;
}

/** The Worker a deploy with `argv` of the config at `path` makes, by wrangler's own reading of it. */
export function deployedName(argv: string[], path: string): string | undefined {
  const env = flag(argv, "env", "e");
  const name = flag(argv, "name");
  if (name) return env ? `${name}-${env}` : name;
  try {
    return unstable_readConfig(env ? { config: path, env } : { config: path }, { hideWarnings: true }).name;
  } catch {
    return undefined; // an environment the config lacks: wrangler's deploy says so
  }
}

/** Why a deploy with `argv` of the config at `path` (shown as `shown`) must not run, or undefined when it may. */
export function refusal(argv: string[], path: string, shown = "wrangler.toml"): string | undefined {
  const env = flag(argv, "env", "e");
  const target = deployedName(argv, path);
  const made = setupEnvironments(readFileSync(path, "utf8")).find((s) => s.name === target && s.env !== env);
  if (!made) return undefined;
  return [
    `npm run deploy: refused. Worker ${target} was made by npm run setup from [env.${made.env}] in ${shown}`,
    `(its marker lines say so); this deploy (${env ? `[env.${env}]` : "the top level"}) would replace it without its vars and mode.`,
    `Deploy it with: npm run deploy -- --env ${made.env}${shown === "wrangler.toml" ? "" : ` --config ${shown}`}`,
  ].join("\n");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const shown = flag(argv, "config", "c") ?? "wrangler.toml";
  // A missing or broken config: wrangler says what is wrong with it.
  const why = existsSync(resolve(shown)) ? refusal(argv, resolve(shown), shown) : undefined;
  if (why) {
    console.error(why);
    process.exit(1);
  }
  const r = spawnSync(process.execPath, [join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "deploy", ...argv], {
    stdio: "inherit",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  process.exit(r.status ?? 1);
}
