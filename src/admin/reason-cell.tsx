// A row's reason for people, and beside it, muted, its decision's code: what
// operators grep the logs for (the decision lines carry the same code).
import type { RunnerRow } from "./runner-rows.ts";

export function Reason(props: { row: Pick<RunnerRow, "reason" | "code"> }) {
  return (
    <>
      <span class="why">{props.row.reason}</span>
      {props.row.code === null ? (
        ""
      ) : (
        <>
          {" "}
          <code class="code">{props.row.code}</code>
        </>
      )}
    </>
  );
}
