import { measureSweep } from "./sweep-cost.ts";
const [runners, history] = process.argv.slice(2).map(Number);
const r = await measureSweep({ runners: runners!, history: history!, profile: true, steadySweeps: 1 }, (l) => console.log(l));
console.log(r.profile?.totalMs);
for (const l of r.profile?.top ?? []) console.log(l.selfMs.toFixed(1).padStart(8), (l.share * 100).toFixed(1).padStart(5) + "%", l.fn, l.where, l.module);
