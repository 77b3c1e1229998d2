// Workers hand the same env object to every request of an isolate: what is read from it is read once per
// env, in a WeakMap keyed by it, so a test (or a redeploy) that brings another env never sees a stale answer.
// A cache, not state: a new isolate reads again.

/** `read`, memoized per env object; `first` runs once with each env's answer (e.g. to log its warnings). */
export function oncePerEnv<T>(read: (env: Record<string, unknown>) => T, first?: (answer: T) => void): (env: object) => T {
  const cache = new WeakMap<object, T>();
  return (env) => {
    if (cache.has(env)) return cache.get(env) as T;
    const answer = read(env as Record<string, unknown>);
    cache.set(env, answer);
    first?.(answer);
    return answer;
  };
}
