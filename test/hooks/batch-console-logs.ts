// The bench's log sink (ARC_REAPER_TEST_LOG_BATCH=<lines>): the ledger's log lines
// written several to a console.log call, one JSON object per line as before.
// Why: `wrangler dev`'s inspector proxy posts every console message to its Node
// controller over a new loopback connection (InspectorProxyWorker's debug log),
// about 1 ms of CPU and 2 file descriptors each, held for some 45 s. A sweep's
// 10,000 first looks then exhaust this machine's 20,000 descriptors and the
// sweep stalls; a deployed Worker pays nothing of the kind. Production code is
// untouched: src/log.ts still makes one console.log per line.
// One sink per isolate (console is the isolate's): what it holds, its timer, and the console.log it writes with.
let buffer: string[] = [];
let timer: ReturnType<typeof setTimeout> | undefined;
let write: ((...args: unknown[]) => void) | undefined;

/** Writes what the sink holds now (a request's waitUntil calls it: its timers may not outlive it). */
export function flushConsoleLogs(): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  if (buffer.length === 0 || !write) return;
  const lines = buffer;
  buffer = [];
  write(lines.join("\n"));
}

/** Lines the sink holds, not yet written. */
export function heldConsoleLines(): number {
  return buffer.length;
}

/** Installs the sink once per isolate; answers whether it is installed (a batch of 1 is none). */
export function batchConsoleLogs(linesPerCall: number): boolean {
  if (write) return true;
  if (!Number.isSafeInteger(linesPerCall) || linesPerCall < 2) return false;
  const original = console.log.bind(console);
  write = original;
  console.log = (...args: unknown[]): void => {
    if (args.length !== 1 || typeof args[0] !== "string") {
      flushConsoleLogs(); // keep the order of lines
      original(...args);
      return;
    }
    buffer.push(args[0]);
    if (buffer.length >= linesPerCall) flushConsoleLogs();
    else timer ??= setTimeout(flushConsoleLogs, 20);
  };
  return true;
}
