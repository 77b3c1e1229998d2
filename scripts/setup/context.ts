// What every step gets: the answers, the progress, the secrets held in memory
// (never written anywhere), and one way to say what it did.
import type { Answers } from "./answers.ts";
import type { Prompter } from "./prompter.ts";
import { saveState, type SetupState } from "./state.ts";
import type { Wrangler } from "./wrangler.ts";

export interface Say {
  step(title: string): void;
  done(text: string): void;
  info(text: string): void;
  warn(text: string): void;
}

export const plainSay: Say = {
  step: (t) => console.log(`\n== ${t}`),
  done: (t) => console.log(`  done: ${t}`),
  info: (t) => console.log(`  ${t}`),
  warn: (t) => console.log(`  warning: ${t}`),
};

export interface StepContext {
  a: Answers;
  root: string;
  state: SetupState;
  save(): void;
  say: Say;
  wrangler: Wrangler;
  /** Secrets of this run, by their Worker secret name; memory only. */
  memory: Map<string, string>;
  /** Interactive mode: asks the user (a confirmation before touching a cluster). */
  ask: Prompter | undefined;
  /** Opens a URL in the user's browser (interactive mode only). */
  open(url: string): void;
}

/** A step that cannot go on: exit code 1, the message says why and what to do. */
export class StepError extends Error {}

export function contextSave(stateDir: string, state: SetupState): () => void {
  return () => saveState(stateDir, state);
}
