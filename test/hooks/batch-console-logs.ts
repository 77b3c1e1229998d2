// The bench's log sink (ARC_REAPER_TEST_LOG_BATCH=<lines>): the ledger's log lines
// written several to a console.log call, one JSON object per line as before.
// Why: `wrangler dev`'s inspector proxy posts every console message to its Node
// controller over a new loopback connection (InspectorProxyWorker's debug log),
// about 1 ms of CPU and 2 file descriptors each, held for some 45 s. A sweep's
// 10,000 first looks then exhaust this machine's 20,000 descriptors and the
// sweep stalls; a deployed Worker pays nothing of the kind. Production code is
// untouched: src/log.ts still makes one console.log per line.
let installed = false; // one sink per isolate: console is the isolate's
let flushNow = (): void => {};
let held = 0;

/** Writes what the sink holds now (a request's waitUntil calls it: its timers may not outlive it). */
export function flushConsoleLogs(): void {
  flushNow();
}

/** Lines the sink holds, not yet written. */
export function heldConsoleLines(): number {
  return held;
}

export function batchConsoleLogs(linesPerCall: number): boolean {
  if (installed) return true;
  if (!Number.isSafeInteger(linesPerCall) || linesPerCall < 2) return false;
  installed = true;
  const write = console.log.bind(console);
  let buffer: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0) return;
    const lines = buffer;
    buffer = [];
    held = 0;
    write(lines.join("\n"));
  };
  flushNow = flush;
  console.log = (...args: unknown[]): void => {
    if (args.length !== 1 || typeof args[0] !== "string") {
      flush(); // keep the order of lines
      write(...args);
      return;
    }
    held = buffer.push(args[0]);
    if (buffer.length >= linesPerCall) flush();
    else timer ??= setTimeout(flush, 20);
  };
  return true;
}
