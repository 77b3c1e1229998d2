// The deployment's config, where a team commits it: one wrangler environment
// (`[env.production]` by default, --env to name another) in the repository's
// wrangler.toml (or --wrangler-config), between two marker lines that setup
// owns. Every later command names it: `npm run deploy -- --env production`.
// Wrangler does not inherit vars and bindings into an environment, so the block
// repeats the top level's bindings (the ledger, the front door) and holds setup's
// vars alone: defaults stay the code's, and nothing secret is in it. The markers
// are also how `npm run deploy` (scripts/deploy.ts) knows which Worker setup made.

const KEY = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;
const HEADER = /^\s*\[(\[?)([^\]]+)\]\]?\s*(#.*)?$/;
const BEGIN = /^# >>> npm run setup: \[env\.([A-Za-z0-9_-]+)\]/;
const END = /^# <<< npm run setup: \[env\.([A-Za-z0-9_-]+)\]/;

const begin = (env: string) => `# >>> npm run setup: [env.${env}] is the deployment; commit it; deploy it with: npm run deploy -- --env ${env}`;
const end = (env: string) => `# <<< npm run setup: [env.${env}] (edit the vars above as you like; setup keeps an edited block as it is)`;

/** The config's lines outside setup's block for `env` (every block when `env` is undefined). */
function outside(text: string, env?: string): string[] {
  const out: string[] = [];
  let inBlock = false;
  for (const line of text.split("\n")) {
    const b = BEGIN.exec(line);
    if (b && (env === undefined || b[1] === env)) inBlock = true;
    if (!inBlock) out.push(line);
    const e = END.exec(line);
    if (inBlock && e && (env === undefined || e[1] === env)) inBlock = false;
  }
  return out;
}

/** Setup's block for `env` in `text`, markers included, or undefined. */
export function setupBlock(text: string, env: string): string | undefined {
  const lines = text.split("\n");
  const from = lines.findIndex((l) => BEGIN.exec(l)?.[1] === env);
  const to = lines.findIndex((l, i) => i > from && END.exec(l)?.[1] === env);
  return from < 0 || to < 0 ? undefined : lines.slice(from, to + 1).join("\n");
}

/** The top level's array tables wrangler does not inherit (`[[durable_objects.bindings]]`, `[[ratelimits]]`, ...): their key lines. */
function bindingTables(lines: string[]): { table: string; keys: string[] }[] {
  const tables: { table: string; keys: string[] }[] = [];
  let current: { table: string; keys: string[] } | undefined;
  for (const line of lines) {
    const h = HEADER.exec(line);
    if (h) {
      const name = (h[2] ?? "").trim();
      current = h[1] === "[" && !name.startsWith("env.") && name !== "migrations" ? { table: name, keys: [] } : undefined;
      if (current) tables.push(current);
      continue;
    }
    if (current && KEY.test(line)) current.keys.push(line.trim());
  }
  return tables;
}

/** `source` with setup's block for `env` written anew: the Worker's name, the top level's bindings, setup's vars. */
export function renderEnvironment(source: string, env: string, name: string, vars: Record<string, string>): string {
  const kept = outside(source, env);
  while (kept.length > 0 && kept[kept.length - 1]?.trim() === "") kept.pop();
  const block = [begin(env), `[env.${env}]`, `name = ${JSON.stringify(name)}`];
  for (const t of bindingTables(outside(source))) block.push("", `[[env.${env}.${t.table}]]`, ...t.keys);
  block.push("", `[env.${env}.vars]`, ...Object.entries(vars).map(([k, v]) => `${k} = ${JSON.stringify(v)}`), end(env));
  return `${kept.join("\n")}\n\n${block.join("\n")}\n`;
}

/** The environments setup wrote into `text`, with the Worker each deploys. */
export function setupEnvironments(text: string): { env: string; name: string }[] {
  const found: { env: string; name: string }[] = [];
  for (const line of text.split("\n")) {
    const env = BEGIN.exec(line)?.[1];
    if (env === undefined) continue;
    const block = setupBlock(text, env) ?? "";
    const name = /^name = "([^"]+)"$/m.exec(block)?.[1];
    if (name) found.push({ env, name });
  }
  return found;
}
