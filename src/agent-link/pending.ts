// Requests sent to an agent and awaiting their answer, by id: the one matcher
// for delete orders and read orders. Each waits at most its timeout, then
// resolves with undefined; an answer from another connection than the one
// asked is no answer; a connection that closes settles its requests at once.
// Only what is awaited right now lives here: an order runs inside an alarm or
// a sweep, which keeps the instance awake while it waits.

interface Waiting<T> {
  conn: string;
  /** What else the answer must match (a delete order's uid). */
  key: string;
  resolve: (answer: T | undefined) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class PendingRequests<T> {
  private readonly waiting = new Map<string, Waiting<T>>();

  /** Awaits the answer to request `id`, sent on connection `conn`; undefined after `timeoutMs` (then `onTimeout` runs). */
  wait(id: string, conn: string, timeoutMs: number, opts: { key?: string; onTimeout?: () => void } = {}): Promise<T | undefined> {
    const key = opts.key ?? "";
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.settle(id, undefined)) opts.onTimeout?.();
      }, timeoutMs);
      this.waiting.set(id, { conn, key, resolve, timer });
    });
  }

  /** Whether request `id` awaits an answer from `conn` (with `key`, when it has one). */
  awaits(id: string, conn: string, key = ""): boolean {
    const w = this.waiting.get(id);
    return w !== undefined && w.conn === conn && w.key === key;
  }

  /** Resolves request `id` (once); false when nothing awaited it. */
  settle(id: string, answer: T | undefined): boolean {
    const w = this.waiting.get(id);
    if (!w) return false;
    this.waiting.delete(id);
    clearTimeout(w.timer);
    w.resolve(answer);
    return true;
  }

  /** Every request sent on `conn` gets `answer` (the connection closed or was replaced). */
  settleConn(conn: string, answer: T | undefined): void {
    for (const [id, w] of [...this.waiting]) if (w.conn === conn) this.settle(id, answer);
  }

  get size(): number {
    return this.waiting.size;
  }
}
