// Writes table 4 of BENCHMARKS.md (the alarm's latency and the synthetic day) again from the figures of
// `npm run bench -- --only=day` (.bench/bench-day.json, not in git), and the long-jobs headline with it,
// leaving the other tables as their run wrote them; the table says which run and commit it is from.
//   node bench/render-day.ts
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "../scripts/lib/local-stack.ts";
import { daySection, type Report } from "./report.ts";

const saved = JSON.parse(await readFile(join(ROOT, ".bench", "bench-day.json"), "utf8")) as { load: [string, string]; result: Report["day"] };
const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
const load = `Load average (1 min) on this shared 2-core machine: ${saved.load[0]} when this table started, ${saved.load[1]} when it ended.`;
const section = daySection(saved.result, load).replace(
  "\n\n**The alarm's latency, measured**",
  `\n\nThis table alone is from a later run, \`npm run bench -- --only=day\` on ${new Date().toISOString().slice(0, 10)} at commit ${commit}; the others are from the run named at the top.\n\n**The alarm's latency, measured**`,
);
const path = join(ROOT, "BENCHMARKS.md");
const md = await readFile(path, "utf8");
const [start, end] = [md.indexOf("## 4. The alarm's latency"), md.indexOf("## 5. ")];
if (start < 0 || end < start) throw new Error("BENCHMARKS.md has no table 4 followed by table 5 to replace");
const headline = saved.result.result.facts.find((f) => f.startsWith("GitHub calls per hour on the long-jobs day"));
let out = `${md.slice(0, start)}${section.replace(/\n*$/, "\n\n")}${md.slice(end)}`;
if (headline) out = out.replace(/^GitHub calls per hour on the long-jobs day are [^\n]*$/m, headline);
await writeFile(path, out);
process.stdout.write(`wrote table 4 of BENCHMARKS.md from bench-day.json (commit ${commit})\n`);
