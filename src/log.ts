/** One structured JSON log line. Callers pass only non-secret fields. */
export function logLine(fields: object): void {
  console.log(JSON.stringify({ at: new Date().toISOString(), ...fields }));
}
