import {
  type Clock,
  type ClockTimer,
  createApp,
  hours,
  MemoryLogger,
  memoryStore,
  PauseStatus,
} from "@agboss/core";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { SlackAsker } from "../src/index.js";
import { FakeSlack } from "./fixtures/fake-slack.js";
import { BOT_TOKEN, SIGNING_SECRET } from "./fixtures/harness.js";
import { RELEASES, ReleaseApplication, ReleaseWorkflowStart } from "./fixtures/release-app.js";

/** A clock that moves only when the test jumps it; the timers due by then fire, oldest first. */
class JumpClock implements Clock {
  #now = Date.UTC(2026, 0, 5, 9);
  readonly #timers = new Set<{ due: number; callback: () => void }>();
  now(): number {
    return this.#now;
  }
  setTimer(delayMs: number, callback: () => void): ClockTimer {
    const timer = { due: this.#now + Math.max(0, delayMs), callback };
    this.#timers.add(timer);
    return { cancel: () => void this.#timers.delete(timer) };
  }
  jump(ms: number): void {
    this.#now += ms;
    for (const timer of [...this.#timers].sort((a, b) => a.due - b.due)) {
      if (timer.due > this.#now) continue;
      this.#timers.delete(timer);
      timer.callback();
    }
  }
}

let slack: FakeSlack;

beforeEach(async () => {
  slack = await new FakeSlack(BOT_TOKEN).start();
});

afterEach(async () => {
  await slack.stop();
});

test("a deadline's reminder is a reply in the question's thread, and its expiry closes the question's buttons", async () => {
  const clock = new JumpClock();
  const app = await createApp(ReleaseApplication, {
    store: memoryStore(),
    clock,
    logger: new MemoryLogger(),
    providers: [
      SlackAsker.with({ botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, apiUrl: slack.url, env: {} }),
    ],
  });
  const asked = clock.now();
  await app.execute(
    ReleaseWorkflowStart,
    { text: "deploy api 1.4.2 to staging" },
    { threadId: "t-late", ownerId: "dana", tenant: { tenantId: "acme" } },
  );
  const [question] = slack.topLevel(RELEASES);
  const ts = question?.ts as string;
  const pauseId = String(question?.metadata?.event_payload.pause_id);

  clock.jump(hours(4).milliseconds);
  await vi.waitFor(() => expect(slack.thread(RELEASES, ts)).toHaveLength(1));
  expect(slack.thread(RELEASES, ts)[0]?.text).toBe(
    `:bell: Reminder 1: this question, asked <!date^${Math.floor(asked / 1000)}^{date_short_pretty} at {time}|${new Date(asked).toISOString()}>, is still waiting for an answer.`,
  );
  // The question itself is untouched: its buttons still answer it.
  expect(slack.callsOf("chat.update")).toEqual([]);

  clock.jump(hours(20).milliseconds);
  await vi.waitFor(async () =>
    expect((await app.store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(
      PauseStatus.Taken,
    ),
  );
  await vi.waitFor(() => expect(slack.callsOf("chat.update")).toHaveLength(1));
  const [closed] = slack.topLevel(RELEASES);
  expect(closed?.metadata?.event_payload).toMatchObject({ pause_id: pauseId, state: "withdrawn" });
  expect(JSON.stringify(closed?.blocks)).toContain(":hourglass: Expired: nobody answered in time.");
  // The sweep after the jump found the expiry due: it expired the pause without the reminders it skipped.
  expect(slack.thread(RELEASES, ts)).toHaveLength(1);
  await app.close();
});
