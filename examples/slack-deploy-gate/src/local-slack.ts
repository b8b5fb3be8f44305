import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { signSlackRequest } from "@agboss/channel-slack";

/** A message in the local workspace. */
interface LocalMessage {
  readonly ts: string;
  readonly channel: string;
  readonly user: string;
  readonly byApp: boolean;
  readonly threadTs: string | undefined;
  text: string;
  blocks: unknown[] | undefined;
  metadata: unknown;
}

/** A message as GET /messages shows it. */
export interface LocalMessageView {
  readonly ts: string;
  readonly channel: string;
  readonly text: string;
  /** The buttons' labels and action ids; empty once answered or withdrawn. */
  readonly buttons: readonly { readonly label: string; readonly actionId: string }[];
  /** What the message says about itself after its question closed. */
  readonly status: string | undefined;
  /** The metadata's state: open, answered or withdrawn. */
  readonly state: string | undefined;
  readonly thread: readonly { readonly user: string; readonly text: string }[];
  /** Notes only one person saw (ephemeral messages), about this message or its thread. */
  readonly notes: readonly { readonly user: string; readonly text: string }[];
}

const APP_ID = "ALOCALGATE";
const TEAM_ID = "TLOCAL0001";

/**
 * A stand-in for Slack on 127.0.0.1, for running the deploy gate with no Slack workspace. It serves the
 * Web API methods the channel calls under `/api/` (so the real `@slack/web-api` client talks to it), and
 * plays the people: `POST /press` clicks a button and `POST /reply` answers in a thread, each delivered
 * to the webhook signed with the signing secret, as Slack would. `GET /messages` shows the conversation.
 */
export class LocalSlack {
  /** The bot token the local Web API accepts. */
  readonly botToken = `xoxb-local-${randomBytes(8).toString("hex")}`;
  /** The secret requests to the webhook are signed with. */
  readonly signingSecret = randomBytes(16).toString("hex");
  readonly #messages: LocalMessage[] = [];
  readonly #notes: { channel: string; user: string; text: string; threadTs: string | undefined }[] = [];
  #server: Server | undefined;
  #url = "";
  #webhookUrl: string | undefined;
  #next = 0;

  /** The stand-in's base URL, e.g. `http://127.0.0.1:4100`. */
  get url(): string {
    return this.#url;
  }

  /** The Web API base URL to give the channel (`SLACK_API_URL`). */
  get apiUrl(): string {
    return `${this.#url}/api/`;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((req, res) => {
      this.#serve(req, res).catch((error: unknown) => {
        res
          .writeHead(500, { "content-type": "application/json" })
          .end(JSON.stringify({ error: String(error) }));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    this.#server = server;
    this.#url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  /** Where clicks and replies are delivered: the deploy gate's Slack webhook. */
  deliverTo(webhookUrl: string): void {
    this.#webhookUrl = webhookUrl;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The conversation's top-level messages, oldest first, with their threads and notes. */
  messages(): LocalMessageView[] {
    return this.#messages.filter((m) => m.threadTs === undefined).map((m) => this.#view(m));
  }

  /** Presses a button of a message (default: the latest one that has buttons) as `user`. */
  async press(args: { actionId: string; user: string; ts?: string }): Promise<number> {
    const message = this.#target(args.ts, (m) => this.#view(m).buttons.length > 0);
    const button = this.#buttons(message).find((b) => b.action_id === args.actionId);
    if (button === undefined)
      throw new LocalSlackError(`message ${message.ts} has no button ${args.actionId}`);
    const payload = {
      type: "block_actions",
      api_app_id: APP_ID,
      team: { id: TEAM_ID },
      user: { id: args.user, team_id: TEAM_ID },
      container: { type: "message", channel_id: message.channel, message_ts: message.ts },
      channel: { id: message.channel },
      message: { ts: message.ts, text: message.text, blocks: message.blocks, app_id: APP_ID },
      actions: [
        { type: "button", action_id: button.action_id, value: button.value, block_id: "agboss_actions" },
      ],
    };
    return this.#deliver(
      `payload=${encodeURIComponent(JSON.stringify(payload))}`,
      "application/x-www-form-urlencoded",
    );
  }

  /** Writes `text` in the thread of a message (default: the latest question) as `user`. */
  async reply(args: { text: string; user: string; ts?: string }): Promise<number> {
    const parent = this.#target(args.ts, (m) => m.byApp);
    const message = this.#add({
      channel: parent.channel,
      user: args.user,
      text: args.text,
      threadTs: parent.ts,
    });
    const envelope = {
      type: "event_callback",
      api_app_id: APP_ID,
      team_id: TEAM_ID,
      event_id: `Ev${message.ts.replace(".", "")}`,
      event: {
        type: "message",
        channel: message.channel,
        user: message.user,
        text: message.text,
        ts: message.ts,
        thread_ts: parent.ts,
      },
    };
    return this.#deliver(JSON.stringify(envelope), "application/json");
  }

  async #deliver(body: string, contentType: string): Promise<number> {
    if (this.#webhookUrl === undefined) throw new LocalSlackError("no webhook to deliver to yet");
    const res = await fetch(this.#webhookUrl, {
      method: "POST",
      headers: {
        "content-type": contentType,
        ...signSlackRequest({ signingSecret: this.signingSecret, body }),
      },
      body,
    });
    await res.arrayBuffer();
    return res.status;
  }

  #target(ts: string | undefined, fits: (m: LocalMessage) => boolean): LocalMessage {
    const found =
      ts === undefined
        ? this.#messages.filter((m) => m.threadTs === undefined && fits(m)).at(-1)
        : this.#messages.find((m) => m.ts === ts);
    if (found === undefined)
      throw new LocalSlackError(ts === undefined ? "no such message yet" : `no message ${ts}`);
    return found;
  }

  #buttons(message: LocalMessage): { action_id: string; value: string; text: { text: string } }[] {
    return (message.blocks ?? [])
      .flatMap(
        (b) =>
          (b as { elements?: { type?: string; action_id: string; value: string; text: { text: string } }[] })
            .elements ?? [],
      )
      .filter((e) => e.action_id !== undefined && typeof e.value === "string");
  }

  #view(message: LocalMessage): LocalMessageView {
    const status = (message.blocks ?? []).find(
      (b) => (b as { block_id?: string }).block_id === "agboss_status",
    ) as { elements: { text: string }[] } | undefined;
    const state = (message.metadata as { event_payload?: { state?: string } } | undefined)?.event_payload
      ?.state;
    return {
      ts: message.ts,
      channel: message.channel,
      text: message.text,
      buttons: this.#buttons(message).map((b) => ({ label: b.text.text, actionId: b.action_id })),
      status: status?.elements[0]?.text,
      state,
      thread: this.#messages
        .filter((m) => m.threadTs === message.ts)
        .map((m) => ({ user: m.user, text: m.text })),
      notes: this.#notes
        .filter(
          (n) => n.channel === message.channel && (n.threadTs === undefined || n.threadTs === message.ts),
        )
        .map((n) => ({ user: n.user, text: n.text })),
    };
  }

  #add(args: {
    channel: string;
    user: string;
    text: string;
    threadTs?: string;
    byApp?: boolean;
  }): LocalMessage {
    this.#next += 1;
    const message: LocalMessage = {
      ts: `${Math.floor(Date.now() / 1000)}.${String(this.#next).padStart(6, "0")}`,
      channel: args.channel,
      user: args.user,
      byApp: args.byApp === true,
      threadTs: args.threadTs,
      text: args.text,
      blocks: undefined,
      metadata: undefined,
    };
    this.#messages.push(message);
    return message;
  }

  /** The Web API: just what the Slack channel calls. */
  #call(method: string, args: Record<string, string>): Record<string, unknown> {
    const json = (value: string | undefined) => (value === undefined ? undefined : JSON.parse(value));
    switch (method) {
      case "chat.postMessage": {
        const message = this.#add({
          channel: args.channel ?? "",
          user: "ULOCALBOT",
          text: args.text ?? "",
          byApp: true,
          ...(args.thread_ts === undefined ? {} : { threadTs: args.thread_ts }),
        });
        message.blocks = json(args.blocks);
        message.metadata = json(args.metadata);
        return { ok: true, channel: message.channel, ts: message.ts };
      }
      case "chat.update": {
        const message = this.#messages.find((m) => m.channel === args.channel && m.ts === args.ts);
        if (message === undefined) return { ok: false, error: "message_not_found" };
        if (args.text !== undefined) message.text = args.text;
        if (args.blocks !== undefined) message.blocks = json(args.blocks);
        if (args.metadata !== undefined) message.metadata = json(args.metadata);
        return { ok: true, channel: message.channel, ts: message.ts };
      }
      case "chat.postEphemeral":
        this.#notes.push({
          channel: args.channel ?? "",
          user: args.user ?? "",
          text: args.text ?? "",
          threadTs: args.thread_ts,
        });
        return { ok: true };
      case "conversations.history": {
        const latest = args.latest === undefined ? Number.POSITIVE_INFINITY : Number(args.latest);
        const inclusive = args.inclusive === "true";
        const newestFirst = this.#messages
          .filter((m) => m.channel === args.channel && m.threadTs === undefined)
          .filter((m) => (inclusive ? Number(m.ts) <= latest : Number(m.ts) < latest))
          .reverse();
        const from = Number(args.cursor ?? "0");
        const limit = Number(args.limit ?? "100");
        const page = newestFirst.slice(from, from + limit);
        const more = from + limit < newestFirst.length;
        return {
          ok: true,
          messages: page.map((m) => ({
            type: "message",
            ts: m.ts,
            text: m.text,
            user: m.user,
            ...(m.blocks === undefined ? {} : { blocks: m.blocks }),
            ...(m.byApp ? { bot_id: "BLOCALBOT", app_id: APP_ID } : {}),
            ...(args.include_all_metadata === "true" && m.metadata !== undefined
              ? { metadata: m.metadata }
              : {}),
          })),
          has_more: more,
          response_metadata: { next_cursor: more ? String(from + limit) : "" },
        };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = "";
    for await (const chunk of req) raw += String(chunk);
    const path = new URL(req.url ?? "/", this.#url).pathname;
    const send = (status: number, body: unknown) =>
      void res.writeHead(status, { "content-type": "application/json" }).end(`${JSON.stringify(body)}\n`);

    if (path.startsWith("/api/")) {
      if (req.headers.authorization !== `Bearer ${this.botToken}`)
        return send(200, { ok: false, error: "invalid_auth" });
      return send(200, this.#call(path.slice("/api/".length), Object.fromEntries(new URLSearchParams(raw))));
    }
    try {
      if (req.method === "GET" && path === "/messages") return send(200, { messages: this.messages() });
      const body = raw === "" ? {} : (JSON.parse(raw) as Record<string, string>);
      const user = body.user ?? "ULOCALDEV1";
      if (req.method === "POST" && path === "/press") {
        const actionId = body.button === "hold" ? "agboss_reject" : "agboss_approve";
        const status = await this.press({
          actionId,
          user,
          ...(body.ts === undefined ? {} : { ts: body.ts }),
        });
        return send(200, { delivered: status });
      }
      if (req.method === "POST" && path === "/reply") {
        const status = await this.reply({
          text: body.text ?? "",
          user,
          ...(body.ts === undefined ? {} : { ts: body.ts }),
        });
        return send(200, { delivered: status });
      }
      send(404, { error: "not found" });
    } catch (error) {
      send(400, { error: error instanceof Error ? error.message : String(error) });
    }
  }
}

/** A request to the local stand-in that it cannot carry out. */
export class LocalSlackError extends Error {}
