import type { ExecutionFrame } from "../container/execution-context.js";
import type { PauseRecord } from "../pauses/pause-record.js";
import { PauseAnswerer } from "../pauses/pause-status.js";
import { ExecutionStatus } from "../records/execution-status.js";
import { type ProgressEvent, streamErrorOf } from "./progress.js";
import type { FollowerBus, RuntimeServices } from "./runtime-services.js";

/**
 * What a follower hears from a pass of this process: an event of the stream's kinds, and for a pause's
 * event the pause's own id (kept even for a channel's pause, whose event shows none), so what the
 * follower reads from the store later is not told twice.
 * @internal
 */
export type FollowerListener = (event: { readonly type: string }, pauseKey: string | undefined) => void;

/**
 * The process-local bus of `app.follow`: every pass of this process tells it what it does, keyed by its
 * tenant and root execution, and it hands that on to whoever follows the tree here. One check of a
 * map's size when nobody follows anything.
 * @internal
 */
export class Followers implements FollowerBus {
  readonly #trees = new Map<string, Set<FollowerListener>>();

  /** Whether anybody follows the tree `rootExecutionId` of `tenantId` in this process. */
  watching(tenantId: string, rootExecutionId: string): boolean {
    return this.#trees.size > 0 && this.#trees.has(keyOf(tenantId, rootExecutionId));
  }

  /** Hears every event of the tree until the returned function is called. */
  listen(tenantId: string, rootExecutionId: string, listener: FollowerListener): () => void {
    const key = keyOf(tenantId, rootExecutionId);
    let listeners = this.#trees.get(key);
    if (listeners === undefined) {
      listeners = new Set();
      this.#trees.set(key, listeners);
    }
    listeners.add(listener);
    return () => {
      const now = this.#trees.get(key);
      if (now === undefined) return;
      now.delete(listener);
      if (now.size === 0) this.#trees.delete(key);
    };
  }

  /** Hands `event` to every follower of the tree; a follower that throws is not the pass's concern. */
  publish(
    tenantId: string,
    rootExecutionId: string,
    event: { readonly type: string },
    pauseKey?: string,
  ): void {
    const listeners = this.#trees.get(keyOf(tenantId, rootExecutionId));
    if (listeners === undefined) return;
    for (const listener of [...listeners]) {
      try {
        listener(event, pauseKey);
      } catch {
        // A follower's own failure stays with the follower.
      }
    }
  }
}

function keyOf(tenantId: string, rootExecutionId: string): string {
  return `${tenantId}\u0000${rootExecutionId}`;
}

/** Whether anybody in this process follows the tree `frame` runs in. @internal */
export function followed(services: RuntimeServices, frame: ExecutionFrame): boolean {
  return services.followers?.watching(frame.tenant.tenantId, frame.rootExecutionId) ?? false;
}

/** The tree an event is about, as the follower bus keys it and the stream names it. */
interface FollowedTree {
  readonly tenantId: string;
  readonly rootExecutionId: string;
  readonly executionId: string;
  readonly threadId: string;
}

/** Hands the followers of `tree` in this process an event; `body` is built only when someone follows. */
function tellFollowers(
  services: RuntimeServices,
  tree: FollowedTree,
  body: () => { readonly type: string } & Record<string, unknown>,
): void {
  const followers = services.followers;
  if (followers === undefined || !followers.watching(tree.tenantId, tree.rootExecutionId)) return;
  const event = {
    executionId: tree.executionId,
    rootExecutionId: tree.rootExecutionId,
    threadId: tree.threadId,
    at: new Date(services.clock.now()).toISOString(),
    ...body(),
  };
  followers.publish(tree.tenantId, tree.rootExecutionId, event);
}

/**
 * Tells the followers of a tree how a pass of this process left it at rest: paused or completed with
 * what `execute` / `resume` returned.
 * @internal
 */
export function tellFollowersRested(
  services: RuntimeServices,
  frame: ExecutionFrame,
  output: {
    readonly status: string;
  },
): void {
  tellFollowers(services, { ...frame, tenantId: frame.tenant.tenantId }, () => ({
    type: output.status === ExecutionStatus.Paused ? "execution.paused" : "execution.finished",
    output,
  }));
}

/**
 * Tells the followers of a tree that it ended failed or cancelled, with the error its caller gets (for a
 * cancel, `ExecutionCancelledError`).
 * @internal
 */
export function tellFollowersFailed(services: RuntimeServices, tree: FollowedTree, error: unknown): void {
  tellFollowers(services, tree, () => ({ type: "execution.failed", error: streamErrorOf(error) }));
}

/**
 * Tells the followers of a pause's tree that it was withdrawn outside its step: by `app.cancel`, a
 * quorum that was decided, a failed tree, or its deadline (an escalation asks another role; an expiry
 * answers it with the role's outcome). Nothing is built when nobody follows the tree.
 * @internal
 */
export function tellFollowersWithdrawn(services: RuntimeServices, pause: PauseRecord): void {
  const followers = services.followers;
  if (followers === undefined || !followers.watching(pause.tenantId, pause.rootExecutionId)) return;
  followers.publish(
    pause.tenantId,
    pause.rootExecutionId,
    pauseEventOf(pause, "pause.withdrawn", services.clock.now()),
    pause.pauseId,
  );
}

/**
 * A pause's event as the stream shows it, from its record: a channel's pause without its id, the role
 * asked, and for an answer the outcome.
 * @internal
 */
export function pauseEventOf(
  pause: PauseRecord,
  type: "pause.asked" | "pause.answered" | "pause.withdrawn",
  at: number,
): ProgressEvent {
  const named = {
    executionId: pause.executionId,
    rootExecutionId: pause.rootExecutionId,
    threadId: pause.threadId,
    at: new Date(at).toISOString(),
    pauseId: pause.answeredBy === PauseAnswerer.ThreadOwner ? pause.pauseId : undefined,
    tool: pause.ask.tool,
    callId: pause.ask.callId,
    agent: pause.agent,
  };
  if (type === "pause.asked") return { ...named, type, role: pause.channel };
  if (type === "pause.withdrawn") return { ...named, type };
  const answer = pause.answer;
  const outcome =
    answer?.decision !== undefined ? (answer.decision.approved ? "approved" : "rejected") : "answered";
  return { ...named, type, outcome };
}
