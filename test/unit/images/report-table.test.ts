// npm run images's table (scripts/images/report-table.ts).
import { describe, expect, it } from "vitest";
import { reportTable } from "../../../scripts/images/report-table.ts";

describe("reportTable", () => {
  it("aligns the columns, numbers to the right, one decimal", () => {
    const table = reportTable([
      { image: "localhost/arc-reaper-agent:0.1.0", sizeMB: 304.19, compressedMB: 71.59, layers: 2, baseLayers: 1, buildSeconds: 37.26, check: "/livez 200" },
      { image: "localhost/arc-reaper-server:0.1.0", sizeMB: 164.21, compressedMB: 51.82, layers: 12, baseLayers: 11, buildSeconds: 80.94, check: "reaped" },
    ]);
    expect(table.split("\n")).toEqual([
      "image                              size (MB)  gzip (MB)  layers (base)  build (s)  run",
      "---------------------------------  ---------  ---------  -------------  ---------  ----------",
      "localhost/arc-reaper-agent:0.1.0       304.2       71.6          2 (1)       37.3  /livez 200",
      "localhost/arc-reaper-server:0.1.0      164.2       51.8        12 (11)       80.9  reaped",
    ]);
  });

  it("is the header alone for no images", () => {
    expect(reportTable([]).split("\n")).toHaveLength(2);
  });
});
