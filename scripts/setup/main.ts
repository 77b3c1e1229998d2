// npm run setup: from a clone to arc-reaper deployed in dry run. Each step says
// what it did; a stopped setup resumes where it stopped (state.ts); nothing it
// did not make is replaced without --replace. docs/deploy.md opens with it.
import { spawn } from "node:child_process";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { intro, outro } from "@clack/prompts";
import { AnswerError, resolveAnswers, type Answers } from "./answers.ts";
import { appStep } from "./app-step.ts";
import { checkStep } from "./check-step.ts";
import { agentClusterStep } from "./cluster-step.ts";
import { plainSay, StepError, type StepContext } from "./context.ts";
import { directClusterStep } from "./direct-step.ts";
import { helpText, parseFlags, type Flags } from "./options.ts";
import { confirmPlan, kubeApiUrlWarnings } from "./plan.ts";
import { Cancelled, clackPrompter } from "./prompter.ts";
import { answersOf, answersPath, loadAnswers, saveAnswers, withSavedAnswers } from "./saved-answers.ts";
import { secretServer } from "./secret-server.ts";
import { secretsStep } from "./secrets-step.ts";
import { loadState, saveState } from "./state.ts";
import { deployCommand, workerStep } from "./worker-step.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

function openInBrowser(url: string): void {
  const command = process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(command, [url], { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // no browser here: the URL is printed
  }
}

function nextSteps(c: StepContext): void {
  const url = c.state.worker?.url ?? "";
  const config = relative(process.cwd(), c.wrangler.config) || c.wrangler.config;
  const env = c.wrangler.env;
  c.say.step("Next");
  c.say.info(`Admin page: ${url}/admin (log in with ADMIN_TOKEN)`);
  if (c.a.showTokens) {
    for (const name of ["ADMIN_TOKEN", "METRICS_TOKEN"]) {
      const value = c.memory.get(name);
      if (value) c.say.info(`${name}: ${value}   (shown once: keep it in your password manager; it is stored nowhere else)`);
    }
  }
  c.say.info(`The deployment is [env.${env}] in ${config}: commit it (git add ${config}); every later deploy is ${deployCommand(c)}.`);
  c.say.info("1. Watch the dry run for a day that includes a few cancelled workflows: every runner it would delete is listed");
  c.say.info(`   as finished with "would delete: ..." on ${url}/admin, and logged (npx wrangler tail --env ${env}).`);
  c.say.info(`2. Then turn deletion on: set REAPER_DRY_RUN = "false" under [env.${env}.vars] in ${config} and run ${deployCommand(c)}`);
  c.say.info("   (docs/deploy.md, step 8, says what to check first).");
}

async function runSetup(flags: Flags): Promise<number> {
  const interactive = flags.yes !== true && process.stdin.isTTY === true && process.stdout.isTTY === true;
  const ask = interactive ? clackPrompter : undefined;
  if (interactive) intro("arc-reaper setup");
  // The answers are kept from the first one given: a stop anywhere asks only the rest again.
  const stateDir = resolve(flags["state-dir"] ?? join(ROOT, ".setup"));
  const kept = withSavedAnswers(flags, loadAnswers(stateDir));
  if (kept.fromFile.length > 0)
    plainSay.info(
      `answers kept from an earlier run (${relative(process.cwd(), answersPath(stateDir))}): ${kept.fromFile.map((k) => `--${k}`).join(", ")}; a flag replaces one`,
    );
  const given = answersOf(kept.flags);
  let a: Answers;
  try {
    a = await resolveAnswers(kept.flags, ask, ROOT, process.env, (key, value) => {
      given[key] = value;
      saveAnswers(stateDir, given);
    });
    saveAnswers(stateDir, given);
  } catch (e) {
    if (e instanceof AnswerError) {
      console.error(`setup: ${e.message}\nNothing was created.`);
      return 2;
    }
    throw e;
  }
  const state = loadState(a.stateDir);
  const serve = secretServer();
  const c: StepContext = {
    a,
    root: ROOT,
    state,
    save: () => saveState(a.stateDir, state),
    say: plainSay,
    wrangler: { root: ROOT, config: a.wranglerConfig, env: a.env },
    memory: new Map(),
    ask,
    open: openInBrowser,
  };
  const stop = () => {
    console.error(
      "\nsetup stopped: what is done is recorded in",
      relative(process.cwd(), a.stateDir) || a.stateDir,
      "- run npm run setup again to resume where it stopped.",
    );
    void serve.close().finally(() => process.exit(130));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const warnings = a.mode === "direct" && a.kubeApiUrl ? await kubeApiUrlWarnings(a.kubeApiUrl) : [];
    if (!(await confirmPlan(c, warnings))) {
      console.log(
        `\nNothing was changed. The answers are kept in ${relative(process.cwd(), answersPath(stateDir))}: run npm run setup again (a flag changes one).`,
      );
      return 0;
    }
    await workerStep(c);
    await appStep(c);
    await secretsStep(c);
    if (a.mode === "agent") await agentClusterStep(c, serve);
    else await directClusterStep(c);
    const waitMs = Number(flags["wait-minutes"] ?? "30") * 60_000;
    const ok = await checkStep(c, Number.isFinite(waitMs) && waitMs > 0 ? waitMs : 30 * 60_000);
    if (ok) nextSteps(c);
    if (interactive) outro(ok ? "arc-reaper runs, in dry run." : "Not finished: run npm run setup again to go on.");
    return ok ? 0 : 1;
  } catch (e) {
    if (e instanceof Cancelled) return 130;
    if (e instanceof StepError) {
      console.error(`\nsetup: ${e.message}`);
      return 1;
    }
    console.error(`\nsetup failed: ${e instanceof Error ? e.message : String(e)}\nRun npm run setup again to resume where it stopped.`);
    return 1;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await serve.close();
  }
}

// The in-cluster home has a setup of its own (cluster-target.ts): no Cloudflare on that path.
if (process.argv.slice(2).some((a) => a === "--target" || a.startsWith("--target="))) {
  process.exit(await (await import("./cluster-target.ts")).clusterTarget(process.argv.slice(2), ROOT, process.env));
}
let flags: Flags;
try {
  flags = parseFlags(process.argv.slice(2));
} catch (e) {
  console.error(`setup: ${e instanceof Error ? e.message : String(e)}\nNothing was created. npm run setup -- --help lists the flags.`);
  process.exit(2);
}
if (flags.help) {
  console.log(helpText());
  process.exit(0);
}
process.exitCode = await runSetup(flags);
