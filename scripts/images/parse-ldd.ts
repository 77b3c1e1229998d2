// ldd's answer for one binary, read: the files the dynamic loader maps.
//
// Plain Node (type stripping): erasable TypeScript only.

/**
 * The absolute paths ldd names: `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)`
 * and the loader's own line `/lib64/ld-linux-x86-64.so.2 (0x…)`. The vDSO
 * (`linux-vdso.so.1`, no file) is skipped; a library ldd could not find
 * (`=> not found`) throws, naming it.
 */
export function parseLdd(text: string): string[] {
  const paths: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || /^(linux-vdso|linux-gate)\.so/.test(line) || /^statically linked$/.test(line)) continue;
    const missing = /^(\S+) => not found/.exec(line);
    if (missing) throw new Error(`ldd: ${missing[1]} not found on this machine`);
    const linked = /=>\s+(\/\S+)/.exec(line) ?? /^(\/\S+)\s+\(0x/.exec(line);
    if (linked?.[1] && !paths.includes(linked[1])) paths.push(linked[1]);
  }
  return paths;
}
