// One token per cluster from AGENT_TOKEN (src/http/agent-token.ts).
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { admitsCluster, clusterToken } from "../../../src/http/agent-token.ts";

const SECRET = "agent-secret-0123456789";
const opensslToken = (cluster: string): string => createHmac("sha256", SECRET).update(cluster).digest("hex");

describe("clusterToken", () => {
  it("is the lowercase hex HMAC-SHA256 of the cluster's name keyed with AGENT_TOKEN, as openssl makes it", async () => {
    expect(await clusterToken(SECRET, "eu-west")).toBe(opensslToken("eu-west"));
    expect(await clusterToken(SECRET, "eu-west")).toMatch(/^[0-9a-f]{64}$/);
    // A mac byte under 16 is two digits still (the token is always 64 characters).
    expect(await clusterToken("k", "a")).toBe(createHmac("sha256", "k").update("a").digest("hex"));
  });
});

describe("admitsCluster", () => {
  it("admits a cluster's own token, in either case", async () => {
    expect(await admitsCluster(SECRET, "eu-west", opensslToken("eu-west"))).toBe(true);
    expect(await admitsCluster(SECRET, "eu-west", opensslToken("eu-west").toUpperCase())).toBe(true);
  });

  it("refuses another cluster's token and a token made with another secret", async () => {
    expect(await admitsCluster(SECRET, "eu-west", opensslToken("us-east"))).toBe(false);
    expect(await admitsCluster("other-secret", "eu-west", opensslToken("eu-west"))).toBe(false);
  });

  it("admits AGENT_TOKEN itself for the default cluster only, and exactly (case counts)", async () => {
    expect(await admitsCluster(SECRET, "default", SECRET)).toBe(true);
    expect(await admitsCluster(SECRET, "default", opensslToken("default"))).toBe(true);
    expect(await admitsCluster(SECRET, "eu-west", SECRET)).toBe(false);
    expect(await admitsCluster(SECRET, "default", SECRET.toUpperCase())).toBe(false);
    expect(await admitsCluster(SECRET, "default", "")).toBe(false);
  });
});
