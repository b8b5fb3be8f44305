// A thread takes a new execution once its latest one has ended. After one that completed, the new
// execution carries the conversation on. After one cancelled while a tool call waited, whose last
// checkpoint still holds the tool step it was in, the new execution starts from the new input, and that
// step is not run again: its call was cancelled with it.

import { ExecutionStatus, replyWith } from "@agboss/core";
import { expect } from "vitest";
import { onEachBackendAndPostgres } from "../../src/backends.js";
import {
  Desk,
  OfficeAgent,
  OfficeApplication,
  OfficeWorkflowStart,
} from "../../src/fixtures/approval-app.js";
import { acme, pauseRefund, scriptThread } from "../../src/office.js";

// A thread whose execution was cancelled while a tool call waited takes a new execution. The cancelled
// one's last checkpoint still holds the tool step it was in; the new execution starts from the new
// input, and that step is not run again: its call was cancelled with it.

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("a new execution on a thread whose execution was cancelled mid-way does not run the cancelled step again", async ({
    app,
    mockLlm,
  }) => {
    const { result } = await pauseRefund(app, mockLlm, "t-reused");
    expect(result.status).toBe(ExecutionStatus.Paused);
    await app.cancel("t-reused", { tenantId: acme.tenantId });
    const asked = app.get(Desk).asked.filter((a) => a.channel === "refund").length;

    scriptThread(mockLlm, "anything else?", replyWith("Nothing else"));
    const next = await app.execute(
      OfficeWorkflowStart,
      { text: "anything else?" },
      { threadId: "t-reused", ownerId: "alice", tenant: acme },
    );
    expect(next.status).toBe(ExecutionStatus.Completed);
    expect(next.output).toEqual({ text: "Nothing else" });
    expect(next.executionId).not.toBe(result.executionId);
    expect(app.get(Desk).asked.filter((a) => a.channel === "refund")).toHaveLength(asked);
  });

  test("a new execution on a thread whose execution completed carries its conversation on, and runs each step once", async ({
    app,
    mockLlm,
  }) => {
    scriptThread(mockLlm, "first question", replyWith("First answer"), replyWith("Second answer"));
    const options = { threadId: "t-done", ownerId: "alice", tenant: acme };
    const first = await app.execute(OfficeWorkflowStart, { text: "first question" }, options);
    expect(first.status).toBe(ExecutionStatus.Completed);
    const second = await app.execute(OfficeWorkflowStart, { text: "second question" }, options);
    expect(second.status).toBe(ExecutionStatus.Completed);
    expect(second.output).toEqual({ text: "Second answer" });
    const turns = mockLlm(OfficeAgent).calls;
    expect(turns).toHaveLength(2);
    expect(turns[1]?.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "first question",
      "second question",
    ]);
  });
});
