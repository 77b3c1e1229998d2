// Step 4 (agent mode): per cluster, the overlay of infra/agent, the agent's
// token (hex HMAC-SHA256 of the cluster's name keyed with AGENT_TOKEN) as a
// Secret, and `kubectl apply -k` when kubectl has a context and the user agrees;
// else the one command to run, which reads the Secret from setup (secret-server.ts).
import { relative } from "node:path";
import type { StepContext } from "./context.ts";
import { agentSecretOwner, applyKustomize, applyStdin, contextFor } from "./kubectl.ts";
import { agentSecretYaml, writeAgentOverlay } from "./overlay.ts";
import type { SecretServer } from "./secret-server.ts";
import { heldToken } from "./secrets-step.ts";
import { clusterToken } from "./tokens.ts";

export async function agentClusterStep(c: StepContext, serve: SecretServer): Promise<void> {
  c.say.step("4. The clusters (agent mode)");
  const workerUrl = c.state.worker?.url ?? "";
  const single = c.a.clusters.length === 1;
  const finished = (cluster: string) => {
    const st = c.state.clusters[cluster];
    return c.state.checkedAt !== undefined || (st?.secret === "created" && st.applied === true);
  };
  // A token made anew (the earlier run's was in its memory only) must reach every cluster again.
  const had = c.memory.has("AGENT_TOKEN");
  const agentToken = c.a.clusters.some((cl) => !finished(cl)) ? await heldToken(c, "AGENT_TOKEN") : undefined;
  const redoAll = !had && agentToken !== undefined;
  for (const cluster of c.a.clusters) {
    const overlay = writeAgentOverlay({ root: c.root, stateDir: c.a.stateDir, cluster, namespaces: c.a.namespaces, workerUrl, image: c.a.agentImage });
    c.state.clusters[cluster] ??= { overlay };
    const st = c.state.clusters[cluster];
    st.overlay = overlay;
    const shown = relative(process.cwd(), overlay) || overlay;
    if (finished(cluster) && !redoAll) {
      c.say.done(`cluster ${cluster}: the agent was set up by an earlier run (overlay ${shown}): kept`);
      continue;
    }
    if (agentToken === undefined) {
      c.say.warn(
        `cluster ${cluster}: AGENT_TOKEN was on the Worker before setup, so setup cannot make this cluster's token: make Secret arc-reaper-agent-token as docs/deploy.md#several-clusters says, then kubectl apply -k ${shown}`,
      );
      continue;
    }
    const token = await clusterToken(agentToken, cluster);
    const context = await contextFor(c.root, cluster, single);
    const agree =
      context !== undefined &&
      (c.a.apply ||
        (c.ask !== undefined && (await c.ask.confirm({ message: `Apply the agent to cluster ${cluster} with kubectl context ${context}?`, initial: true }))));
    if (context !== undefined && agree) {
      const k = { root: c.root, context };
      const owner = await agentSecretOwner(k);
      if (owner === "other" && !c.a.replace) {
        st.secret = "kept";
        c.say.warn(
          `cluster ${cluster}: Secret arc-reaper-agent-token was there before setup: kept (its token must be the one made for ${cluster}; --replace to let setup replace it)`,
        );
      } else {
        await applyStdin(k, agentSecretYaml(token));
        st.secret = "created";
      }
      await applyKustomize(k, overlay);
      st.applied = true;
      c.save();
      c.say.done(`cluster ${cluster}: applied ${shown} and the agent's token Secret with context ${context}`);
      continue;
    }
    const url = await serve.add(cluster, agentSecretYaml(token));
    st.secret = "printed";
    st.applied = false;
    c.save();
    const ctx = single ? "" : ` --context ${cluster}`;
    c.say.info(
      `cluster ${cluster}: overlay written to ${shown}. ${context === undefined ? "kubectl has no context for it here" : "Not applied, as you chose"}; run this where kubectl reaches it, while setup waits below (the token comes from setup, never on the command line):`,
    );
    c.say.info(`  curl -fsS ${url} | kubectl${ctx} apply -f - && kubectl${ctx} apply -k ${shown}`);
  }
  if (c.a.agentImage)
    c.say.info(
      `The agent's image is ${c.a.agentImage}: if it is not in your registry yet, from this directory: docker build -t ${c.a.agentImage} . && docker push ${c.a.agentImage}`,
    );
}
