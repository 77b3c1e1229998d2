// The answers, kept in <state dir>/answers.json from the first one given: a
// setup stopped anywhere (mid-questions, before its first step ends) asks only
// what is still missing when run again. Only answers are kept, never a secret:
// names, URLs and the paths of key files, not the keys. A flag given on a later
// run replaces the kept answer.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ANSWER_FLAGS, type AnswerFlag, type Flags } from "./options.ts";

export type SavedAnswers = Partial<Record<AnswerFlag, string>>;

export function answersPath(stateDir: string): string {
  return join(stateDir, "answers.json");
}

export function loadAnswers(stateDir: string): SavedAnswers {
  const path = answersPath(stateDir);
  if (!existsSync(path)) return {};
  const parsed = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const out: SavedAnswers = {};
  for (const k of ANSWER_FLAGS) if (typeof parsed[k] === "string") out[k] = parsed[k];
  return out;
}

/** Written whole and renamed into place. */
export function saveAnswers(stateDir: string, answers: SavedAnswers): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = answersPath(stateDir);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(answers, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/** The flags with the kept answers under them (a flag wins), and which answers came from the file. */
export function withSavedAnswers(flags: Flags, saved: SavedAnswers): { flags: Flags; fromFile: AnswerFlag[] } {
  const fromFile = ANSWER_FLAGS.filter((k) => flags[k] === undefined && saved[k] !== undefined);
  return { flags: { ...saved, ...flags }, fromFile };
}

const PATHS: AnswerFlag[] = ["app-key-file", "webhook-secret-file", "wrangler-config"];

/** The answer flags in `flags` (what a run was given), to keep; paths made absolute (a later run may start elsewhere). */
export function answersOf(flags: Flags): SavedAnswers {
  const out: SavedAnswers = {};
  for (const k of ANSWER_FLAGS) {
    const v = flags[k];
    if (v !== undefined) out[k] = PATHS.includes(k) ? resolve(v) : v;
  }
  return out;
}
