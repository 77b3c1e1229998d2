// How many live runners the sweep profile is taken over: at 10,000 the inspector
// proxy, busy forwarding the first sweep's 9,500 log lines, stops answering.
export const PROFILE_RUNNERS = 2_000;
