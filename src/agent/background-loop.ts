// A loop that runs until stopped: start() once, stop() aborts its signal and
// waits for the loop to return. The watch per namespace and the ledger
// connection are both one.

export abstract class BackgroundLoop {
  private readonly stopper = new AbortController();
  private running: Promise<void> | undefined;

  start(): void {
    this.running ??= this.loop(this.stopper.signal);
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    await this.running;
  }

  /** Runs until `signal` aborts; must not throw. */
  protected abstract loop(signal: AbortSignal): Promise<void>;
}
