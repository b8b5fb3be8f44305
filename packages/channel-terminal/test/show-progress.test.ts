import { callTool, createApp, memoryStore, replyWith } from "@agboss/core";
import { afterEach, expect, test } from "vitest";
import { showProgress, TerminalUserChannel } from "../src/index.js";
import {
  OfficeApplication,
  OfficeWorkflowStart,
  RefundCardTool,
  scriptedTurns,
} from "./fixtures/office-app.js";

const quiet = { providers: [TerminalUserChannel.writingTo(null)] };

/** Collects what is written. */
function collector() {
  let text = "";
  return { write: (chunk: string) => (text += chunk), text: () => text };
}

afterEach(() => {
  scriptedTurns.length = 0;
});

test("a streamed run's steps are written as they happen, its text as it arrives, and its result returned", async () => {
  const app = await createApp(OfficeApplication, { store: memoryStore(), ...quiet });
  scriptedTurns.push(
    callTool(RefundCardTool, { orderId: "ord_1", amountCents: 100, cardNumber: "4242424242424242" }),
  );
  const output = collector();
  const paused = await showProgress(
    app.stream(
      OfficeWorkflowStart,
      { text: "refund" },
      { threadId: "t-p", ownerId: "dana", tenantId: "acme" },
    ),
    { output },
  );
  expect(output.text()).toBe(
    [
      "▶ office-workflow",
      "  office-agent calls refund-card-tool",
      "  ⏸ refund-card-tool waits for terminal-user-channel",
      "⏸ waiting on 1 question",
      "",
    ].join("\n"),
  );
  // No digit run of the card number (ids are random hex, so a short run like "4242" may appear in one).
  expect(output.text()).not.toContain("42424242");

  scriptedTurns.push((request) => {
    for (const piece of ["Refund ", "sent."]) request.onText?.(piece);
    return replyWith("Refund sent.");
  });
  const after = collector();
  const done = await showProgress(
    app.streamResume(
      { pauseId: paused.pending[0]?.pauseId as string, decision: { approved: true } },
      { tenantId: "acme", ownerId: "dana" },
    ),
    { output: after },
  );
  expect(done.output).toEqual({ text: "Refund sent." });
  expect(after.text()).toBe(
    [
      "▶ office-workflow goes on (answered by dana)",
      "  ✔ refund-card-tool approved",
      "  ⚙ refund-card-tool …",
      "  ✔ refund-card-tool returned",
      "Refund sent.",
      "■ finished",
      "",
    ].join("\n"),
  );
  await app.close();
});

test("a run that fails is written as failed and its error rethrown; a model's whole text is written when it did not stream", async () => {
  const app = await createApp(OfficeApplication, { store: memoryStore(), ...quiet });
  scriptedTurns.push(() => Promise.reject(new Error("provider down")));
  const output = collector();
  const failing = showProgress(app.stream(OfficeWorkflowStart, { text: "x" }, { ownerId: "dana" }), {
    output,
  });
  await expect(failing).rejects.toThrow("provider down");
  expect(output.text()).toMatch(/^▶ office-workflow\n✖ failed: .*provider down.*\n$/);

  scriptedTurns.push(replyWith("Nothing to do."));
  const quietText = collector();
  await showProgress(app.stream(OfficeWorkflowStart, { text: "y" }, { ownerId: "dana" }), {
    output: quietText,
  });
  expect(quietText.text()).toBe("▶ office-workflow\n  office-agent: Nothing to do.\n■ finished\n");
  await app.close();
});

test("a call refused before the run began writes nothing of its own and rejects with its error", async () => {
  const app = await createApp(OfficeApplication, { store: memoryStore(), ...quiet });
  const output = collector();
  await expect(
    showProgress(app.stream(OfficeWorkflowStart, { text: "" }, { ownerId: "dana" }), { output }),
  ).rejects.toMatchObject({ code: "dto.invalid" });
  expect(output.text()).toBe("");
  await app.close();
});
