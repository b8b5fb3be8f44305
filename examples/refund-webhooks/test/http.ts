import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

/** A JSON answer from the server. */
export interface JsonReply<T = Record<string, unknown>> {
  readonly status: number;
  readonly body: T;
}

/** The demo bearer tokens (`src/callers.ts`) the tests call as. */
export const TOKENS = {
  dana: "dana-token",
  manager: "manager-17-token",
  otherManager: "manager-99-token",
  lead: "lead-4-token",
  globexManager: "globex-manager-token",
} as const;

/** The route that starts the desk's workflow. */
export const START = "/starts/refund-desk-workflow-start";

export async function post<T = Record<string, unknown>>(
  base: string,
  path: string,
  body: unknown,
  token?: string,
): Promise<JsonReply<T>> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

export async function get<T = Record<string, unknown>>(
  base: string,
  path: string,
  token?: string,
): Promise<JsonReply<T>> {
  const res = await fetch(
    `${base}${path}`,
    token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  );
  return { status: res.status, body: (await res.json()) as T };
}

/** Dana asks the desk about an order: `POST /starts/refund-desk-workflow-start`. */
export function requestRefund(
  base: string,
  orderId: string,
  text = "The parcel never arrived.",
  amountCents = 2500,
): Promise<JsonReply> {
  return post(base, START, { input: { orderId, amountCents, text } }, TOKENS.dana);
}

/** A damaged item, reported by Dana. */
export function reportDamage(base: string, orderId: string, amountCents = 2500): Promise<JsonReply> {
  return requestRefund(base, orderId, "The vase arrived damaged.", amountCents);
}

/** `POST /pauses/{pauseId}/answer` with `{ decision }`, `{ answer }` or `{ reply }`. */
export function answerPause(base: string, pauseId: string, body: unknown, token: string): Promise<JsonReply> {
  return post(base, `/pauses/${encodeURIComponent(pauseId)}/answer`, body, token);
}

/** Dana withdraws her request: `POST /threads/order:<orderId>/cancel`. */
export function cancelOrder(base: string, orderId: string): Promise<JsonReply> {
  return post(base, `/threads/${encodeURIComponent(`order:${orderId}`)}/cancel`, undefined, TOKENS.dana);
}

/** One message of GET /outbox. */
export interface OutboxView {
  pauseId: string;
  channel: string;
  kind: "approval" | "question";
  threadId: string;
  question: string;
  arguments: Record<string, unknown>;
  howToAnswer: string;
  state: string;
  note?: string;
}

export async function outbox(base: string): Promise<OutboxView[]> {
  return (await get<{ messages: OutboxView[] }>(base, "/outbox")).body.messages;
}

/** The server as `pnpm start` runs it, in a child process of its own. */
export interface ChildServer {
  readonly url: string;
  readonly output: () => string;
  /** Sends SIGTERM and waits for the process to exit; resolves its exit code. */
  stop(): Promise<number | null>;
}

const exampleDir = join(import.meta.dirname, "..");

/**
 * Starts `src/main.ts` with scripted models on a free port. The store is what `env` names
 * (`AGBOSS_SQLITE_PATH`, or `AGBOSS_POSTGRES_URL` and `AGBOSS_POSTGRES_SCHEMA`), never one inherited
 * from the environment the tests run in.
 */
export function startChild(env: Readonly<Record<string, string>>): Promise<ChildServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@agboss/source", "src/main.ts"],
    {
      cwd: exampleDir,
      env: {
        ...process.env,
        AGBOSS_SQLITE_PATH: "",
        AGBOSS_POSTGRES_URL: "",
        AGBOSS_POSTGRES_SCHEMA: "",
        PORT: "0",
        HOST: "127.0.0.1",
        AGBOSS_OPENAI_API_KEY: "",
        OPENAI_API_KEY: "",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += String(chunk);
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (url === undefined) return;
      child.stdout?.off("data", onData);
      child.stdout?.on("data", (more: Buffer) => {
        output += String(more);
      });
      resolve({
        url,
        output: () => output,
        stop: () => {
          child.kill("SIGTERM");
          return exited;
        },
      });
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += String(chunk);
    });
    void exited.then((code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)));
  });
}

/** One refund of GET /refunds. */
export interface RefundView {
  refundId: string;
  tenantId: string;
  orderId: string;
  amountCents: number;
  at: string;
}

/** What this instance's card processor was asked to refund. */
export async function refunds(base: string): Promise<RefundView[]> {
  return (await get<{ refunds: RefundView[] }>(base, "/refunds")).body.refunds;
}
