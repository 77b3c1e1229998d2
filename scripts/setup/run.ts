// Runs a command with its input on stdin (never on the command line) and its
// output captured; the caller says what to show.
import { spawn } from "node:child_process";

export interface RunResult {
  code: number;
  out: string;
}

export function run(command: string, args: string[], o: { cwd: string; stdin?: string; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: o.cwd, env: o.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.on("error", (e) => resolve({ code: 127, out: `${out}${e.message}` }));
    child.on("close", (code) => resolve({ code: code ?? 1, out }));
    child.stdin.on("error", () => undefined);
    child.stdin.end(o.stdin ?? "");
  });
}

// ANSI colour codes: ESC [ ... m (built from the code point: Biome refuses a control character in a regex literal).
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** The last lines of a command's output, for an error message. */
export function tail(out: string, lines = 15): string {
  return out.replace(ANSI_COLOUR, "").trim().split("\n").slice(-lines).join("\n");
}
