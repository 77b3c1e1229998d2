// Structured log lines, one JSON object per line on stdout. Callers pass only
// non-secret fields: the token never reaches a log line.

type LogLevel = "debug" | "info" | "warn" | "error";
type LogFields = Record<string, string | number | boolean | null | undefined | string[]>;
export type Log = (level: LogLevel, msg: string, fields?: LogFields) => void;

export function jsonLog(write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Log {
  return (level, msg, fields = {}) => {
    write(JSON.stringify({ at: new Date().toISOString(), level, msg, ...fields }));
  };
}
