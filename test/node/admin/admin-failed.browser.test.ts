// /admin?state=failed in headless Chromium against the real Worker under
// wrangler dev: runners ARC marked Failed, each with its scale set, when it
// failed, ARC's reason and message (a hostile one escaped) and what arc-reaper
// does about it. Saves docs/admin-failed.png.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeEphemeralRunner } from "../../standins/kube/control.ts";
import { ROOT, startLocalStack, type LocalStack } from "../../../scripts/lib/local-stack.ts";
import { pickChromium } from "./pick-chromium.ts";

const SCREENSHOT = join(ROOT, "docs/admin-failed.png");
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
const FAILED = [
  {
    name: "gpu-runners-7xk2p-runner-q9w2e",
    scaleSet: "gpu-runners",
    reason: "PodCreateFailed",
    message: 'admission webhook "validate.kyverno.svc" denied the request: policy require-image-digest: image ghcr.io/octo-org/runner:latest must use a digest',
    failed: 5400,
  },
  {
    name: "gpu-runners-7xk2p-runner-h4j8k",
    scaleSet: "gpu-runners",
    reason: "PodCreateFailed",
    message:
      'pods "gpu-runners-7xk2p-runner-h4j8k" is forbidden: exceeded quota: gpu-quota, requested: nvidia.com/gpu=1, used: nvidia.com/gpu=4, limited: nvidia.com/gpu=4',
    failed: 1500,
  },
  {
    name: "arc-runners-m3n5b-runner-z8x7c",
    scaleSet: "arc-runners",
    reason: "TooManyPodFailures",
    message: `<script>alert(1)</script> \u202epod failed to start 6 times`,
    failed: 300,
  },
];

let stack: LocalStack | undefined;
let context: BrowserContext | undefined;
let page: Page;
let profile: string | undefined;

beforeAll(async () => {
  stack = await startLocalStack({ settings: { REAPER_FAILED_SECONDS: "3600" } });
  const s = stack;
  for (const f of FAILED) {
    await s.kube.seed(
      makeEphemeralRunner({
        namespace: s.namespace,
        scaleSet: f.scaleSet,
        name: f.name,
        phase: "Failed",
        creationTimestamp: ago(f.failed + 120),
        status: { ready: false, reason: f.reason, message: f.message, failures: { "pod-1": ago(f.failed + 60), "pod-2": ago(f.failed) } },
      }),
    );
  }
  await s.sweep();
  const browser = await pickChromium();
  profile = await mkdtemp(join(tmpdir(), "arc-reaper-chromium-"));
  context = await chromium.launchPersistentContext(profile, { executablePath: browser.executablePath, headless: true, timeout: 30_000, args: browser.args });
  context.setDefaultTimeout(15_000);
  await context.setExtraHTTPHeaders({ authorization: `Bearer ${s.adminToken}` });
  page = context.pages()[0] ?? (await context.newPage());
}, 120_000);

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await stack?.stop();
  if (profile) await rm(profile, { recursive: true, force: true });
}, 30_000);

describe("/admin?state=failed in Chromium", () => {
  it("lists each Failed runner with ARC's message, escaped; the one failed past REAPER_FAILED_SECONDS deleted; and saves the screenshot", async () => {
    const s = stack!;
    const res = await page.goto(`${s.url}/admin?state=failed`);
    expect(res?.status()).toBe(200);
    const rows = await page.locator("tr[data-runner]").evaluateAll((trs) => trs.map((r) => r.getAttribute("data-runner")));
    expect(new Set(rows)).toEqual(new Set(FAILED.map((f) => f.name)));
    const hostile = await page.locator(`tr[data-runner="${FAILED[2]!.name}"] td.arc-message`).textContent();
    expect(hostile).toBe("TooManyPodFailures: <script>alert(1)</script> pod failed to start 6 times");
    expect(await page.locator("script").count()).toBe(0);
    const first = await page.locator(`tr[data-runner="${FAILED[0]!.name}"] td.reason`).nth(1).textContent();
    expect(first).toMatch(/^deleted \(cause failed\): ARC marked it Failed 540\ds ago/);
    // Deleted: gone, or held by ARC's finalizers with a deletionTimestamp. The two failed within REAPER_FAILED_SECONDS are not.
    const deletion = async (name: string) => {
      const er = await s.kube.get(s.namespace, name);
      return er === undefined ? "gone" : er.metadata.deletionTimestamp === undefined ? "present" : "being deleted";
    };
    expect(await deletion(FAILED[0]!.name)).toMatch(/^(gone|being deleted)$/);
    expect([await deletion(FAILED[1]!.name), await deletion(FAILED[2]!.name)]).toEqual(["present", "present"]);
    await page.setViewportSize({ width: 1400, height: 500 });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });
});
