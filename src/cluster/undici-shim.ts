// client-node imports undici for its default HTTP stack; workerd cannot run it.
// arc-reaper always passes a fetch-based httpApi, so nothing here is ever called.
const unavailable = (): never => {
  throw new Error("arc-reaper: undici is not available in workerd; use the fetch-based httpApi");
};
export class Agent {
  constructor() {
    unavailable();
  }
}
export const fetch = unavailable;
export default { Agent, fetch };
