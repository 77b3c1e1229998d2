// GitHub hands out App keys as PKCS#1 ("BEGIN RSA PRIVATE KEY"); in workerd
// @octokit/auth-app signs with WebCrypto, which imports PKCS#8 only. This wraps
// a PKCS#1 key in the PKCS#8 envelope (RFC 5208) without touching its bits.

const PKCS1 = /-----BEGIN RSA PRIVATE KEY-----([\s\S]+?)-----END RSA PRIVATE KEY-----/;
// AlgorithmIdentifier { rsaEncryption (1.2.840.113549.1.1.1), NULL }
const RSA_ALGORITHM = [0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00];
const VERSION_0 = [0x02, 0x01, 0x00];

export function toPkcs8(pem: string): string {
  const match = PKCS1.exec(pem);
  if (!match) {
    if (pem.includes("-----BEGIN PRIVATE KEY-----")) return `${pem.trim()}\n`;
    throw new Error("arc-reaper github: GITHUB_APP_PRIVATE_KEY is neither a PKCS#1 nor a PKCS#8 PEM key");
  }
  const pkcs1 = base64ToBytes(match[1]!.replace(/\s+/g, ""));
  const octetString = [0x04, ...derLength(pkcs1.length), ...pkcs1];
  const body = [...VERSION_0, ...RSA_ALGORITHM, ...octetString];
  const der = Uint8Array.from([0x30, ...derLength(body.length), ...body]);
  const lines = bytesToBase64(der).match(/.{1,64}/g) ?? [];
  return `-----BEGIN PRIVATE KEY-----\n${lines.join("\n")}\n-----END PRIVATE KEY-----\n`;
}

function derLength(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function bytesToBase64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}
