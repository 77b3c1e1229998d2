/** Compares two secrets without leaking where they differ through timing. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  // Compare against itself when lengths differ so the work does not depend on the guess.
  const other = x.length === y.length ? y : x;
  let diff = x.length === y.length ? 0 : 1;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ other[i]!;
  return diff === 0;
}

/** The token in an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}
