import { callTool, PauseStatus, replyWith } from "@agboss/core";
import { expect } from "vitest";
import { onEachBackend } from "../../src/backends.js";
import { BookExpenseTool, OfficeApplication, OfficeWorkflowStart } from "../../src/fixtures/approval-app.js";
import { acme, pauseExpense, pauseTwo, scriptThread } from "../../src/office.js";

onEachBackend(OfficeApplication, (test) => {
  test("the inbox lists pauses by tenant, status, role and thread, never revealing a Channel pause's id", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { refundPauseId, expensePauseId } = await pauseTwo(app, mockLlm, "t-inbox-1");
    await pauseExpense(app, mockLlm, "t-inbox-2");
    const other = await openApp();
    await other.resume(
      { pauseId: expensePauseId, decision: { approved: true } },
      { tenantId: "acme", ownerId: "alice" },
    );
    const pending = await other.pauses.list({ tenantId: "acme", status: PauseStatus.Pending });
    expect(pending.map((p) => [p.threadId, p.channel]).sort()).toEqual([
      ["t-inbox-1", "refund-approval-channel"],
      ["t-inbox-2", "expense-approval-channel"],
    ]);
    expect(pending.find((p) => p.channel === "refund-approval-channel")?.pauseId).toBeUndefined();
    expect(pending.find((p) => p.channel === "expense-approval-channel")?.pauseId).toEqual(
      expect.any(String),
    );
    expect(JSON.stringify(await other.pauses.list({ tenantId: "acme" }))).not.toContain(refundPauseId);
    const byRole = await other.pauses.list({
      tenantId: "acme",
      role: "expense-approval-channel",
      threadId: "t-inbox-1",
    });
    expect(byRole.map((p) => [p.status, p.responder])).toEqual([["taken", "alice"]]);
    expect(await other.pauses.list({ tenantId: "globex" })).toEqual([]);
    expect(byRole[0]?.ask).toMatchObject({ tool: "book-expense-tool", arguments: { purpose: "taxi" } });
  });

  test("the inbox lists one person's questions across their threads (ownerId), oldest first", async ({
    app,
    mockLlm,
    clock,
  }) => {
    await pauseExpense(app, mockLlm, "t-owner-1");
    await clock.advance(1_000);
    await pauseExpense(app, mockLlm, "t-owner-2");
    scriptThread(
      mockLlm,
      "bob's lunch",
      callTool(BookExpenseTool, { purpose: "lunch", amountCents: 900 }),
      replyWith("Expense handled"),
    );
    await app.execute(
      OfficeWorkflowStart,
      { text: "bob's lunch" },
      { threadId: "t-owner-bob", ownerId: "bob", tenant: acme },
    );
    const alice = await app.pauses.list({ tenantId: "acme", ownerId: "alice", status: PauseStatus.Pending });
    expect(alice.map((p) => p.threadId)).toEqual(["t-owner-1", "t-owner-2"]);
    const bob = await app.pauses.list({ tenantId: "acme", ownerId: "bob" });
    expect(bob.map((p) => [p.threadId, p.kind])).toEqual([["t-owner-bob", "approval"]]);
    expect(await app.pauses.list({ tenantId: "globex", ownerId: "alice" })).toEqual([]);
  });
});
