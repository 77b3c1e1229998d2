// Storage helpers around the ledger's runner rows; the types live in src/model/runner.ts.
import type { RunnerState } from "../model/runner.ts";

export const isOpen = (state: RunnerState): boolean => state === "running" || state === "finished";
