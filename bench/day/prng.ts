/** A small seeded PRNG (mulberry32), so the synthetic day is the same on every run. */
export interface Rng {
  next(): number; // [0, 1)
  between(lo: number, hi: number): number;
  /** Log-normal with the given median and sigma of the underlying normal. */
  logNormal(median: number, sigma: number): number;
  pick<T>(weighted: readonly (readonly [T, number])[]): T;
}

export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    between: (lo, hi) => lo + (hi - lo) * next(),
    logNormal(median, sigma) {
      // Box-Muller; 1 - next() keeps log() away from 0.
      const z = Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
      return median * Math.exp(sigma * z);
    },
    pick(weighted) {
      const total = weighted.reduce((s, [, w]) => s + w, 0);
      let r = next() * total;
      for (const [value, w] of weighted) {
        r -= w;
        if (r < 0) return value;
      }
      return weighted[weighted.length - 1]![0];
    },
  };
}
