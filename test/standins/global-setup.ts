import { createServer } from "node:http";
import type { TestProject } from "vitest/node";

export default async function setup(project: TestProject) {
  const server = createServer((req, res) => res.end("hello " + req.url));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  project.provide("smokePort", typeof addr === "object" && addr ? addr.port : 0);
  return () => new Promise<void>((r) => server.close(() => r()));
}
