// ldd's answer read (scripts/images/parse-ldd.ts): the files a stand-in base copies.
import { describe, expect, it } from "vitest";
import { parseLdd } from "../../../scripts/images/parse-ldd.ts";

describe("parseLdd", () => {
  it("names each mapped file once, the loader too, and skips the vDSO", () => {
    const text = [
      "\tlinux-vdso.so.1 (0x00007ffd6a5f4000)",
      "\tlibdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x00007f3a1c3a3000)",
      "\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f3a1c000000)",
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3a1be1e000)",
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3a1be1e000)",
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f3a1c3bb000)",
      "",
    ].join("\n");
    expect(parseLdd(text)).toEqual([
      "/lib/x86_64-linux-gnu/libdl.so.2",
      "/lib/x86_64-linux-gnu/libstdc++.so.6",
      "/lib/x86_64-linux-gnu/libc.so.6",
      "/lib64/ld-linux-x86-64.so.2",
    ]);
  });

  it("reads arm64's loader line and a static binary's answer", () => {
    expect(
      parseLdd(
        "\tlinux-vdso.so.1 (0x0000ffff9c5f0000)\n\tlibc.so.6 => /lib/aarch64-linux-gnu/libc.so.6 (0x0000ffff9c3f0000)\n\t/lib/ld-linux-aarch64.so.1 (0x0000ffff9c5b3000)\n",
      ),
    ).toEqual(["/lib/aarch64-linux-gnu/libc.so.6", "/lib/ld-linux-aarch64.so.1"]);
    expect(parseLdd("\tstatically linked\n")).toEqual([]);
  });

  it("throws naming a library this machine lacks", () => {
    expect(() => parseLdd("\tlibssl.so.3 => not found\n")).toThrow("ldd: libssl.so.3 not found on this machine");
  });
});
