import { useEffect, useState } from "preact/hooks";
import type { InboxAudit, InboxAuditEntry } from "../src/inbox-types.js";
import { auditOf } from "./api.js";
import { formatTime } from "./time.js";

function what(entry: InboxAuditEntry): string {
  if (entry.resolution === "pending") return "waiting";
  if (entry.resolution === "withdrawn") return "withdrawn";
  if (entry.resolution === "cancelled") return "cancelled";
  const decision = entry.decision as
    | { approved?: boolean; reason?: string; overrideArguments?: unknown }
    | undefined;
  if (decision !== undefined && decision !== null) {
    const verdict = decision.approved === true ? "approved" : "rejected";
    const reason = decision.reason === undefined ? "" : `: “${decision.reason}”`;
    const override =
      decision.overrideArguments === undefined
        ? ""
        : ` with arguments ${JSON.stringify(decision.overrideArguments)}`;
    return `${verdict}${override}${reason}`;
  }
  if (entry.answer !== undefined) return `answered ${JSON.stringify(entry.answer)}`;
  return entry.resolution;
}

/** The execution's audit trail: who answered what, how and when. */
export function AuditTrail(props: { readonly executionId: string; readonly headingId: string }) {
  const [audit, setAudit] = useState<InboxAudit | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    auditOf(props.executionId).then(setAudit, (e: unknown) => setError(String((e as Error).message)));
  }, [props.executionId]);
  if (error !== undefined) return <p role="alert">The audit trail could not be read: {error}</p>;
  if (audit === undefined) return <p aria-live="polite">Reading the audit trail…</p>;
  return (
    <section class="audit" aria-labelledby={props.headingId}>
      <h3 id={props.headingId}>
        Audit trail of {audit.workflow.name} ({audit.status})
      </h3>
      <table>
        <caption class="visually-hidden">Who answered what, how and when</caption>
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">Outcome</th>
            <th scope="col">By</th>
            <th scope="col">Asked</th>
            <th scope="col">Closed</th>
          </tr>
        </thead>
        <tbody>
          {audit.entries.map((entry, i) => (
            <tr key={`${entry.askedAt}-${i}`}>
              <td>{entry.tool ?? entry.role}</td>
              <td>{what(entry)}</td>
              <td>{entry.responder ?? "—"}</td>
              <td>{formatTime(entry.askedAt)}</td>
              <td>{entry.resolvedAt === "" ? "—" : formatTime(entry.resolvedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
