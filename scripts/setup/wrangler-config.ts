// The Worker's config as setup deploys it: the repository's wrangler.toml (or
// --wrangler-config) with its name, its paths made relative to the state dir,
// and setup's vars (REAPER_DRY_RUN=true among them) in [vars]. Nothing secret
// is in it. Later deploys use it: `npx wrangler deploy -c .setup/wrangler.toml`.
import { dirname, relative } from "node:path";

const KEY = /^([A-Za-z_][A-Za-z0-9_]*)\s*=/;

function quote(value: string): string {
  return JSON.stringify(value);
}

export function renderWranglerConfig(source: string, sourcePath: string, outPath: string, name: string, vars: Record<string, string>): string {
  const rel = relative(dirname(outPath), dirname(sourcePath)) || ".";
  const out: string[] = [
    `# Made by \`npm run setup\` from ${relative(dirname(outPath), sourcePath)}: no secrets in here (they are Worker secrets).`,
    `# Deploy changes with: npx wrangler deploy -c ${relative(dirname(sourcePath), outPath)}`,
    "",
  ];
  let table = "";
  const pending = new Map(Object.entries(vars));
  const flushVars = () => {
    for (const [k, v] of pending) out.push(`${k} = ${quote(v)}`);
    pending.clear();
  };
  for (const line of source.split("\n")) {
    const header = /^\s*\[\[?([^\]]+)\]\]?\s*$/.exec(line);
    if (header) {
      if (table === "vars") flushVars();
      table = header[1] ?? "";
      out.push(line);
      continue;
    }
    const key = KEY.exec(line)?.[1];
    if (table === "" && key === "name") out.push(`name = ${quote(name)}`);
    else if (table === "" && key === "main") out.push(line.replace(/"([^"]+)"/, (_m, p: string) => quote(`${rel}/${p}`)));
    else if (table === "alias" && key) out.push(line.replace(/"\.?\/?([^"]+)"/, (_m, p: string) => quote(`${rel}/${p}`)));
    else if (table === "vars" && key && pending.has(key)) {
      out.push(`${key} = ${quote(pending.get(key) ?? "")}`);
      pending.delete(key);
    } else out.push(line);
  }
  if (table === "vars") flushVars();
  else if (pending.size > 0) {
    out.push("[vars]");
    flushVars();
  }
  return out.join("\n");
}
