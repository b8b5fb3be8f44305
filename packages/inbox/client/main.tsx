import { render } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { InboxClosed, InboxEvents, InboxPause } from "../src/inbox-types.js";
import type { Outcome } from "./api.js";
import { PauseCard } from "./pause-card.js";
import { formatTime } from "./time.js";

/** A pause that left the list while the page was open, and why. */
interface Gone {
  readonly pause: InboxPause;
  readonly text: string;
}

type Connection = "connecting" | "live" | "reconnecting" | "signed-out";

/** The tool and its first arguments, to tell one pause from another in a sentence. */
export function pauseName(pause: InboxPause): string {
  const shown = Object.entries(pause.arguments)
    .filter(([, value]) => value !== "***" && (typeof value === "string" || typeof value === "number"))
    .slice(0, 2)
    .map(([name, value]) => `${name} ${String(value)}`);
  return shown.length === 0 ? pause.tool : `${pause.tool} (${shown.join(", ")})`;
}

function closedText(pause: InboxPause, closed: InboxClosed): string {
  const name = pauseName(pause);
  const at = closed.at === undefined ? "" : ` at ${formatTime(closed.at)}`;
  if (closed.resolution === "withdrawn") return `${name} was withdrawn${at}: it is no longer needed.`;
  if (closed.resolution === "cancelled") return `${name} was cancelled${at}.`;
  if (closed.by !== undefined) return `${name} was answered by ${closed.by}${at}.`;
  if (closed.resolution !== undefined && closed.resolution !== "replied" && closed.resolution !== "decided")
    return `${name} closed (${closed.resolution})${at}.`;
  return `${name} was answered${at}.`;
}

function matches(pause: InboxPause, text: string): boolean {
  if (text === "") return true;
  const haystack = [
    pause.tool,
    pause.workflow.name,
    pause.role,
    pause.agent,
    pause.threadId,
    pause.roleDescription ?? "",
    JSON.stringify(pause.arguments),
  ]
    .join(" ")
    .toLowerCase();
  return text
    .toLowerCase()
    .split(/\s+/)
    .every((word) => haystack.includes(word));
}

function Inbox(props: { readonly title: string }) {
  const [pauses, setPauses] = useState<InboxPause[] | undefined>();
  const [gone, setGone] = useState<Gone[]>([]);
  const [announcement, setAnnouncement] = useState("");
  const [connection, setConnection] = useState<Connection>("connecting");
  const [filter, setFilter] = useState("");
  const [kind, setKind] = useState("all");
  const [now, setNow] = useState(Date.now());
  const answeredHere = useRef(new Set<string>());
  const listHeading = useRef<HTMLHeadingElement>(null);
  const pausesRef = useRef<InboxPause[]>([]);
  pausesRef.current = pauses ?? [];

  const announce = (text: string) => setAnnouncement(text);

  /** Removes a pause, keeping the keyboard where it was: on the next pause's heading, else the list's. */
  const remove = useCallback((pauseId: string, why: Gone | undefined, byThisPage: boolean) => {
    const list = pausesRef.current;
    const index = list.findIndex((p) => p.pauseId === pauseId);
    if (index < 0) return;
    const card = document.querySelector(`[data-pause-id="${CSS.escape(pauseId)}"]`);
    const active = document.activeElement;
    // An answer given here may have left the focus on the page's body (its button went away); a pause
    // closed elsewhere moves the focus only when it was inside it.
    const hadFocus =
      card?.contains(active) === true || (byThisPage && (active === null || active === document.body));
    const next = list[index + 1] ?? list[index - 1];
    setPauses(list.filter((p) => p.pauseId !== pauseId));
    if (why !== undefined) setGone((old) => [why, ...old].slice(0, 20));
    if (hadFocus) {
      requestAnimationFrame(() => {
        const target = next === undefined ? null : document.getElementById(`p${next.pauseId}-title`);
        (target ?? listHeading.current)?.focus();
      });
    }
  }, []);

  useEffect(() => {
    const events = new EventSource("api/events");
    events.addEventListener("open", () => setConnection("live"));
    events.addEventListener("error", () => {
      // A 401 closes the stream for good; anything else is retried by the browser.
      if (events.readyState === EventSource.CLOSED) {
        fetch("api/pauses").then((r) => setConnection(r.status === 401 ? "signed-out" : "reconnecting"));
      } else setConnection("reconnecting");
    });
    events.addEventListener("snapshot", (e) => {
      const data = JSON.parse((e as MessageEvent<string>).data) as InboxEvents["snapshot"];
      setPauses([...data.pauses]);
      setConnection("live");
    });
    events.addEventListener("asked", (e) => {
      const { pause } = JSON.parse((e as MessageEvent<string>).data) as InboxEvents["asked"];
      if (pausesRef.current.some((p) => p.pauseId === pause.pauseId)) return;
      setPauses((old) => [pause, ...(old ?? [])].sort((a, b) => b.askedAt.localeCompare(a.askedAt)));
      announce(
        `New: ${pause.kind === "approval" ? "approve" : "answer"} ${pause.tool} in ${pause.workflow.name}.`,
      );
    });
    events.addEventListener("closed", (e) => {
      const closed = JSON.parse((e as MessageEvent<string>).data) as InboxEvents["closed"];
      // Answered through this page: its own answer's reply says so, whichever arrives first.
      if (answeredHere.current.has(closed.pauseId)) return;
      const pause = pausesRef.current.find((p) => p.pauseId === closed.pauseId);
      if (pause === undefined) return;
      const text = closedText(pause, closed);
      remove(closed.pauseId, { pause, text }, false);
      announce(text);
    });
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => {
      events.close();
      clearInterval(timer);
    };
  }, [remove]);

  const onSending = useCallback((pauseId: string, sending: boolean) => {
    if (sending) answeredHere.current.add(pauseId);
    else answeredHere.current.delete(pauseId);
  }, []);

  const onAnswered = useCallback(
    (pause: InboxPause, said: string, outcome: Outcome) => {
      answeredHere.current.add(pause.pauseId);
      const text =
        outcome.outcome === "recorded"
          ? `${said}: ${pauseName(pause)}.`
          : `${pauseName(pause)} was already ${outcome.resolution ?? "closed"}${outcome.by === undefined ? "" : ` by ${outcome.by}`}; nothing changed.`;
      remove(pause.pauseId, { pause, text }, true);
      announce(text);
    },
    [remove],
  );

  const shown = useMemo(
    () => (pauses ?? []).filter((p) => (kind === "all" || p.kind === kind) && matches(p, filter.trim())),
    [pauses, filter, kind],
  );

  return (
    <>
      <header class="top">
        <h1>{props.title}</h1>
        <p class={`connection ${connection}`} role="status">
          {connection === "live"
            ? "Live"
            : connection === "connecting"
              ? "Connecting…"
              : connection === "signed-out"
                ? "Signed out"
                : "Reconnecting…"}
        </p>
      </header>
      <div class="visually-hidden" role="status" aria-live="polite" aria-atomic="true">
        {announcement}
      </div>
      <main>
        {connection === "signed-out" ? (
          <p role="alert">You are not signed in. Sign in, then reload this page.</p>
        ) : (
          <>
            <search class="filters" aria-label="Filter the pauses">
              <div class="field">
                <label for="filter">Filter</label>
                <input
                  id="filter"
                  type="search"
                  placeholder="tool, workflow, order…"
                  value={filter}
                  onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)}
                />
              </div>
              <div class="field">
                <label for="kind">Show</label>
                <select
                  id="kind"
                  value={kind}
                  onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value)}
                >
                  <option value="all">everything</option>
                  <option value="approval">approvals</option>
                  <option value="question">questions</option>
                </select>
              </div>
            </search>
            <h2 id="pending" ref={listHeading} tabIndex={-1} class="list-heading">
              {pauses === undefined
                ? "Reading your inbox…"
                : `${shown.length} waiting${shown.length === pauses.length ? "" : ` (of ${pauses.length})`}`}
            </h2>
            {pauses !== undefined && shown.length === 0 && (
              <p class="empty">
                {pauses.length === 0 ? "Nothing waits for you." : "Nothing matches the filter."}
              </p>
            )}
            <ul class="pauses" aria-labelledby="pending">
              {shown.map((pause) => (
                <li key={pause.pauseId}>
                  <PauseCard pause={pause} now={now} onSending={onSending} onAnswered={onAnswered} />
                </li>
              ))}
            </ul>
            {gone.length > 0 && (
              <section aria-labelledby="gone" class="gone">
                <h2 id="gone">Closed while you were here</h2>
                <ul>
                  {gone.map((g, i) => (
                    <li key={`${g.pause.pauseId}-${i}`}>{g.text}</li>
                  ))}
                </ul>
              </section>
            )}
          </>
        )}
      </main>
    </>
  );
}

const mount = document.getElementById("inbox");
if (mount !== null) {
  mount.replaceChildren();
  render(<Inbox title={mount.dataset.title ?? "Inbox"} />, mount);
}
