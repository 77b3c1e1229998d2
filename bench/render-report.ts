// Writes BENCHMARKS.md again from the figures of the last `npm run bench`
// (.bench/bench-results.json, not in git), for when only the report's wording changed.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ROOT } from "../scripts/lib/local-stack.ts";
import { renderReport, type Report } from "./report.ts";

const report = JSON.parse(await readFile(join(ROOT, ".bench", "bench-results.json"), "utf8")) as Report;
await writeFile(join(ROOT, "BENCHMARKS.md"), renderReport(report));
process.stdout.write("wrote BENCHMARKS.md from bench-results.json\n");
