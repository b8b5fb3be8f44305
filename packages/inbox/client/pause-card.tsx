import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { InboxPause } from "../src/inbox-types.js";
import { answerPause, type Outcome, ProblemError } from "./api.js";
import { AuditTrail } from "./audit-trail.js";
import { SchemaFields } from "./schema-form.js";
import { ago, formatTime } from "./time.js";
import { fieldsOf, type Inputs, readForm, textOf } from "./validate.js";

type Mode = "none" | "reject" | "override" | "reply" | "answer";

const MASK = "***";

/** What the person did, in words, for the announcement once it is recorded. */
export type Answered = (pause: InboxPause, said: string, outcome: Outcome) => void;

function ArgumentList(props: { readonly args: Readonly<Record<string, unknown>> }) {
  return (
    <dl class="args">
      {Object.entries(props.args).map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>
            {value === MASK ? (
              <span class="masked">
                <span aria-hidden="true">•••</span>
                <span class="visually-hidden">masked</span>
              </span>
            ) : (
              textOf(value)
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** The field errors of a refused answer, by the field its issue names, and the rest as one message. */
function issuesOf(
  error: ProblemError,
  names: readonly string[],
): { fields: Record<string, string>; rest: string } {
  const fields: Record<string, string> = {};
  const rest: string[] = [];
  for (const issue of error.problem.issues ?? []) {
    const name = issue.path.split(".").findLast((segment) => names.includes(segment));
    if (name !== undefined) fields[name] = issue.message;
    else rest.push(issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`);
  }
  const message =
    rest.length > 0
      ? rest.join("; ")
      : Object.keys(fields).length > 0
        ? "Fix the fields marked below."
        : (error.problem.reason ?? error.problem.detail ?? error.message);
  return { fields, rest: message };
}

/** One pending pause: what is asked, and the ways to answer it. */
export function PauseCard(props: {
  readonly pause: InboxPause;
  readonly now: number;
  /** Called before an answer is sent (true) and when it failed (false). */
  readonly onSending: (pauseId: string, sending: boolean) => void;
  readonly onAnswered: Answered;
}) {
  const { pause, onAnswered, onSending } = props;
  const id = `p${pause.pauseId}`;
  const argFields = useMemo(() => fieldsOf(pause.schemas.arguments), [pause]);
  const answerFields = useMemo(
    () => (pause.schemas.answer === undefined ? [] : fieldsOf(pause.schemas.answer)),
    [pause],
  );
  const [mode, setMode] = useState<Mode>(pause.kind === "question" ? "answer" : "none");
  const [inputs, setInputs] = useState<Inputs>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [showAudit, setShowAudit] = useState(false);
  const panel = useRef<HTMLFormElement>(null);
  const focusPanel = useRef(false);

  const open = (next: Mode) => {
    setMode(next);
    focusPanel.current = next !== "none";
    setErrors({});
    setMessage(undefined);
    if (next === "override") {
      const start: Record<string, string> = {};
      for (const f of argFields) {
        const value = pause.arguments[f.name];
        start[f.name] = f.sensitive && value === MASK ? "" : textOf(value);
        if (f.control === "boolean") start[f.name] = String(value === true);
      }
      setInputs(start);
    } else if (next === "answer") {
      setInputs(
        Object.fromEntries(answerFields.filter((f) => f.control === "boolean").map((f) => [f.name, "false"])),
      );
    } else {
      setInputs({});
    }
  };
  useEffect(() => {
    if (!focusPanel.current) return;
    focusPanel.current = false;
    panel.current?.querySelector<HTMLElement>("input, select, textarea")?.focus();
  }, [mode]);

  const send = async (body: Record<string, unknown>, said: string, names: readonly string[] = []) => {
    setBusy(true);
    setMessage(undefined);
    onSending(pause.pauseId, true);
    try {
      const outcome = await answerPause(pause.pauseId, body);
      onAnswered(pause, said, outcome);
    } catch (error) {
      onSending(pause.pauseId, false);
      if (!(error instanceof ProblemError)) {
        setMessage(`The answer could not be sent: ${(error as Error).message}. Try again.`);
      } else {
        const { fields, rest } = issuesOf(error, names);
        setErrors(fields);
        setMessage(
          error.problem.code === "pause.uninterpretable-reply"
            ? `Not understood: ${error.problem.reason ?? rest} The question is still open.`
            : rest,
        );
      }
      setBusy(false);
      requestAnimationFrame(() => {
        const invalid = panel.current?.querySelector<HTMLElement>("[aria-invalid='true']");
        (invalid ?? panel.current?.querySelector<HTMLElement>(".form-message"))?.focus();
      });
    }
  };

  const submit = (event: Event) => {
    event.preventDefault();
    if (busy) return;
    if (mode === "reject") {
      const reason = (inputs.reason ?? "").trim();
      void send({ decision: reason === "" ? { approved: false } : { approved: false, reason } }, "Rejected");
    } else if (mode === "reply") {
      const reply = (inputs.reply ?? "").trim();
      if (reply === "") {
        setErrors({ reply: "Write a reply." });
        return;
      }
      void send({ reply }, "Replied");
    } else if (mode === "override") {
      const read = readForm(argFields, inputs, (f) => f.sensitive && (inputs[f.name] ?? "") === "");
      setErrors(read.errors);
      if (read.value === undefined) {
        setMessage("Fix the fields marked below.");
        requestAnimationFrame(() =>
          panel.current?.querySelector<HTMLElement>("[aria-invalid='true']")?.focus(),
        );
        return;
      }
      void send(
        { decision: { approved: true, overrideArguments: read.value } },
        "Approved with changed arguments",
        argFields.map((f) => f.name),
      );
    } else if (mode === "answer") {
      const read = readForm(answerFields, inputs);
      setErrors(read.errors);
      if (read.value === undefined) {
        setMessage("Fix the fields marked below.");
        requestAnimationFrame(() =>
          panel.current?.querySelector<HTMLElement>("[aria-invalid='true']")?.focus(),
        );
        return;
      }
      void send(
        { answer: read.value },
        "Answered",
        answerFields.map((f) => f.name),
      );
    }
  };

  const setInput = (name: string, text: string) => setInputs((old) => ({ ...old, [name]: text }));
  const heading = pause.kind === "approval" ? `Approve ${pause.tool}?` : `Answer for ${pause.tool}`;

  return (
    <article class="pause" aria-labelledby={`${id}-title`} data-pause-id={pause.pauseId}>
      <header>
        <h2 id={`${id}-title`} tabIndex={-1}>
          {heading}
        </h2>
        <p class="meta">
          <span class="badge">{pause.kind}</span> <span>{pause.workflow.name}</span> ·{" "}
          <span>{pause.role}</span> · asked{" "}
          <time dateTime={pause.askedAt} title={formatTime(pause.askedAt)}>
            {ago(pause.askedAt, props.now)}
          </time>
        </p>
      </header>
      {pause.roleDescription !== undefined && <p class="question">{pause.roleDescription}</p>}
      <ArgumentList args={pause.arguments} />
      <div class="actions">
        {pause.kind === "approval" && (
          <>
            <button
              type="button"
              class="primary"
              disabled={busy}
              onClick={() => void send({ decision: { approved: true } }, "Approved")}
            >
              Approve
            </button>
            <button
              type="button"
              aria-expanded={mode === "reject"}
              onClick={() => open(mode === "reject" ? "none" : "reject")}
            >
              Reject…
            </button>
            <button
              type="button"
              aria-expanded={mode === "override"}
              onClick={() => open(mode === "override" ? "none" : "override")}
            >
              Change arguments…
            </button>
          </>
        )}
        {pause.kind === "question" && mode !== "answer" && (
          <button type="button" onClick={() => open("answer")}>
            Fill in the answer…
          </button>
        )}
        {pause.readsReplies && (
          <button
            type="button"
            aria-expanded={mode === "reply"}
            onClick={() => open(mode === "reply" ? "none" : "reply")}
          >
            Reply in words…
          </button>
        )}
        <button type="button" aria-expanded={showAudit} onClick={() => setShowAudit(!showAudit)}>
          Audit trail
        </button>
      </div>
      {mode !== "none" && (
        <form ref={panel} class="panel" onSubmit={submit} noValidate aria-labelledby={`${id}-panel`}>
          <h3 id={`${id}-panel`}>
            {mode === "reject"
              ? "Reject"
              : mode === "override"
                ? "Approve with changed arguments"
                : mode === "reply"
                  ? "Reply in words"
                  : "Your answer"}
          </h3>
          {message !== undefined && (
            <p class="form-message error" role="alert" tabIndex={-1}>
              {message}
            </p>
          )}
          {mode === "reject" && (
            <div class="field">
              <label for={`${id}-reason`}>Reason (optional)</label>
              <textarea
                id={`${id}-reason`}
                rows={2}
                maxLength={4000}
                value={inputs.reason ?? ""}
                onInput={(e) => setInput("reason", (e.currentTarget as HTMLTextAreaElement).value)}
              />
            </div>
          )}
          {mode === "reply" && (
            <div class="field">
              <label for={`${id}-reply`}>Your reply</label>
              <textarea
                id={`${id}-reply`}
                rows={2}
                aria-invalid={errors.reply !== undefined ? "true" : undefined}
                aria-describedby={errors.reply !== undefined ? `${id}-reply-error` : undefined}
                value={inputs.reply ?? ""}
                onInput={(e) => setInput("reply", (e.currentTarget as HTMLTextAreaElement).value)}
              />
              {errors.reply !== undefined && (
                <p id={`${id}-reply-error`} class="error">
                  {errors.reply}
                </p>
              )}
            </div>
          )}
          {mode === "override" && (
            <SchemaFields
              idPrefix={`${id}-arg`}
              fields={argFields}
              inputs={inputs}
              errors={errors}
              onInput={setInput}
              maskedHint="unchanged (masked)"
            />
          )}
          {mode === "answer" && (
            <SchemaFields
              idPrefix={`${id}-ans`}
              fields={answerFields}
              inputs={inputs}
              errors={errors}
              onInput={setInput}
            />
          )}
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {mode === "reject"
                ? "Reject"
                : mode === "override"
                  ? "Approve with these arguments"
                  : mode === "reply"
                    ? "Send reply"
                    : "Send answer"}
            </button>
            {!(mode === "answer" && pause.kind === "question") && (
              <button type="button" onClick={() => open("none")}>
                Cancel
              </button>
            )}
          </div>
        </form>
      )}
      {/* The tree's trail. An instance of an older version (a rolling upgrade) sends no root: a pause of
          the root itself still opens it by its own id; a child's finds none until that instance is upgraded. */}
      {showAudit && (
        <AuditTrail executionId={pause.rootExecutionId ?? pause.executionId} headingId={`${id}-audit`} />
      )}
    </article>
  );
}
