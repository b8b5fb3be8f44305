import type { ChatMessage, ChatResponse } from "../models/chat-model.js";
import { PiiAction, type PiiPolicy } from "./pii-policy.js";
import { PiiRefusedError } from "./pii-refused-error.js";
import { hideableText, PiiTokenMap } from "./pii-token-map.js";
import { PiiUnknownTokenError } from "./pii-unknown-token-error.js";

/** The texts a model reads that policies look into: every message but the (static) system prompt. @internal */
export function readableTexts(messages: readonly ChatMessage[]): string[] {
  const texts: string[] = [];
  for (const message of messages) {
    if (message.role === "system") continue;
    texts.push(message.content);
    if (message.role === "assistant")
      for (const call of message.toolCalls ?? []) texts.push(JSON.stringify(call.arguments));
  }
  return texts;
}

function occurs(texts: readonly string[], value: unknown): boolean {
  const text = hideableText(value);
  if (text === undefined) return false;
  const escaped = JSON.stringify(text).slice(1, -1);
  return texts.some((t) => t.includes(text) || t.includes(escaped));
}

/**
 * Runs the policies over what a model is about to read: a `blockWithRefusal` finding throws
 * {@link PiiRefusedError}; `replaceWithToken` findings go into the call's token map. Undefined when
 * there are no policies.
 * @internal
 */
export function tokenMapFor(args: {
  policies: readonly PiiPolicy[];
  texts: readonly string[];
  sensitive: readonly unknown[];
  caller: string;
}): PiiTokenMap | undefined {
  if (args.policies.length === 0) return undefined;
  const map = new PiiTokenMap();
  for (const { detector, action } of args.policies) {
    const found: unknown[] = [];
    if (detector.kind === "fields") {
      for (const value of args.sensitive) if (occurs(args.texts, value)) found.push(value);
    } else if (detector.pattern !== undefined) {
      for (const text of args.texts)
        for (const match of text.matchAll(detector.pattern)) found.push(match[0]);
    }
    if (found.length === 0) continue;
    if (action === PiiAction.BlockWithRefusal) throw new PiiRefusedError(detector.name, args.caller);
    for (const value of found) map.add(value);
  }
  return map;
}

/** Messages as the model reads them: values to hide replaced by tokens, in order. @internal */
export function hideMessages(map: PiiTokenMap, messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message): ChatMessage => {
    if (message.role === "system" || map.empty) return message;
    if (message.role !== "assistant") return { ...message, content: map.hide(message.content) };
    return {
      ...message,
      content: map.hide(message.content),
      ...(message.toolCalls === undefined
        ? {}
        : {
            toolCalls: message.toolCalls.map((call) => ({
              ...call,
              arguments: map.hideDeep(call.arguments),
            })),
          }),
    };
  });
}

/**
 * The model's answer with its tokens revealed; a token no map knows declines it with
 * {@link PiiUnknownTokenError}.
 * @internal
 */
export function revealResponse(map: PiiTokenMap, response: ChatResponse, caller: string): ChatResponse {
  const unknown = new Set<string>();
  const revealed: ChatResponse = {
    ...response,
    content: map.reveal(response.content, unknown),
    toolCalls: response.toolCalls.map((call) => ({
      ...call,
      arguments: map.revealDeep(call.arguments, unknown),
    })),
  };
  if (unknown.size > 0) throw new PiiUnknownTokenError([...unknown], revealed, caller);
  return revealed;
}
