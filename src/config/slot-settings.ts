// Issue 24's two settings, read apart from settings.ts so that its schema work
// merges easily: REAPER_FAILED_SECONDS (unset: never delete a Failed runner)
// and REAPER_FINISH_STUCK (default false).
type Source = Readonly<Record<string, unknown>>;

export interface SlotSettings {
  /** A runner ARC marked Failed at least this long ago is deleted; undefined: never. */
  failedSeconds?: number;
  /** Finish a stuck deletion (remove ARC's finalizers) once GitHub says its job completed. */
  finishStuck: boolean;
}

/** Smallest REAPER_FAILED_SECONDS: ARC retries a pod for a while; deleting sooner would race its own controller. */
export const MIN_FAILED_SECONDS = 60;

export function readSlotSettings(env: Source, errors: string[]): SlotSettings {
  const out: SlotSettings = { finishStuck: false };
  const failed = env["REAPER_FAILED_SECONDS"];
  if (failed !== undefined && failed !== "") {
    const text = String(failed).trim();
    if (!/^\d+$/.test(text) || Number(text) < MIN_FAILED_SECONDS || Number(text) > 30 * 86_400) {
      errors.push(`REAPER_FAILED_SECONDS must be a whole number of seconds from ${MIN_FAILED_SECONDS} to 2592000, or unset (never delete a Failed runner), got ${JSON.stringify(text.slice(0, 40))}`);
    } else out.failedSeconds = Number(text);
  }
  const finish = String(env["REAPER_FINISH_STUCK"] ?? "false").trim().toLowerCase();
  if (!["true", "false", "1", "0", ""].includes(finish)) errors.push(`REAPER_FINISH_STUCK must be true or false, got ${JSON.stringify(finish.slice(0, 40))}`);
  out.finishStuck = finish === "true" || finish === "1";
  return out;
}
