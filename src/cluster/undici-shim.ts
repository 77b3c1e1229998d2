// client-node imports undici for its default HTTP stack and kubeconfig
// proxies; workerd cannot run it. arc-reaper always passes a fetch-based
// httpApi (fetch-http-library.ts), so nothing here is ever called.
const unavailable = (): never => {
  throw new Error("arc-reaper: undici is not available in workerd; the cluster client uses fetch");
};
export class Agent {
  constructor() {
    unavailable();
  }
}
export class ProxyAgent extends Agent {}
export const fetch = unavailable;
export default { Agent, ProxyAgent, fetch };
