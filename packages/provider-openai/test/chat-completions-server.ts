import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the server received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body, read loosely by assertions
  readonly body: any;
}

/** What a test answers one request with. */
export interface CompletionAnswer {
  readonly content?: string | null;
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: unknown }[];
  /** Candidates at the first token: `[token, probability]`; the first is the chosen one. */
  readonly firstToken?: readonly (readonly [string, number])[];
  readonly usage?: { readonly input: number; readonly output: number };
  /** Answer with this HTTP status and body instead of a completion. */
  readonly status?: number;
}

/** A loopback HTTP server that speaks the chat completions API, answering as the test says. */
export interface ChatCompletionsServer {
  /** The base URL to configure, ending in `/v1`. */
  readonly baseURL: string;
  readonly requests: ReceivedRequest[];
  close(): Promise<void>;
}

let ids = 0;

/** The JSON body of a chat completion for `answer`. */
export function completionBody(model: string, answer: CompletionAnswer): Record<string, unknown> {
  const toolCalls = (answer.toolCalls ?? []).map((call) => ({
    id: `call_${++ids}`,
    type: "function",
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
  const first = answer.firstToken;
  const logprobs =
    first === undefined
      ? null
      : {
          content: [
            {
              token: first[0]?.[0] ?? "",
              logprob: Math.log(first[0]?.[1] ?? 1),
              bytes: null,
              top_logprobs: first.map(([token, p]) => ({ token, logprob: Math.log(p), bytes: null })),
            },
          ],
        };
  return {
    id: `chatcmpl-${++ids}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: answer.content ?? (toolCalls.length > 0 ? null : ""),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs,
        finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop",
      },
    ],
    usage: {
      prompt_tokens: answer.usage?.input ?? 10,
      completion_tokens: answer.usage?.output ?? 1,
      total_tokens: (answer.usage?.input ?? 10) + (answer.usage?.output ?? 1),
    },
  };
}

/**
 * Starts the server on 127.0.0.1 at a random port. `answer` is asked for every POST to
 * `/v1/chat/completions`, with the request already recorded.
 */
export async function startChatCompletionsServer(
  answer: (request: ReceivedRequest) => CompletionAnswer | Promise<CompletionAnswer>,
): Promise<ChatCompletionsServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const request: ReceivedRequest = {
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          body: text === "" ? undefined : JSON.parse(text),
        };
        requests.push(request);
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(body));
        };
        if (request.method !== "POST" || request.path !== "/v1/chat/completions") {
          send(404, { error: { message: `no route ${request.method} ${request.path}` } });
          return;
        }
        try {
          const reply = await answer(request);
          if (reply.status !== undefined) send(reply.status, { error: { message: "scripted failure" } });
          else send(200, completionBody(String(request.body?.model), reply));
        } catch (error) {
          send(500, { error: { message: error instanceof Error ? error.message : String(error) } });
        }
      })();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}
