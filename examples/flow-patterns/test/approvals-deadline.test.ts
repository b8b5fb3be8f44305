import { TerminalUserChannel } from "@agboss/channel-terminal";
import { ExecutionStatus, hours } from "@agboss/core";
import { testWith } from "@agboss/testing";
import { describe, expect } from "vitest";
import {
  OfficeAgent,
  OfficeApplication,
  OfficeLedger,
  OfficeWorkflowStart,
  officeTurn,
} from "../src/approvals/index.js";

const written: string[] = [];
const test = testWith(OfficeApplication, {
  providers: [TerminalUserChannel.writingTo({ write: (text: string) => written.push(text) })],
});

describe("the approvals example's deadline", () => {
  test("a refund nobody approves is reminded every four hours and rejected after two days; the expense still waits", async ({
    app,
    clock,
    mockLlm,
  }) => {
    written.length = 0;
    // The example's own scripted turn: both tools in one turn, then a report of what became of each.
    mockLlm(OfficeAgent).thenReturn(officeTurn, officeTurn);
    const paused = await app.execute(
      OfficeWorkflowStart,
      { text: "Refund order ord_1042, and book my taxi." },
      { threadId: "desk:dana", ownerId: "dana", tenant: { tenantId: "acme" } },
    );
    expect(paused.status).toBe(ExecutionStatus.Paused);
    await clock.advance(hours(4));
    expect(written.filter((l) => l.startsWith("• reminder"))).toEqual([
      expect.stringMatching(
        /^• reminder 1: dana has not answered the question about refund-tool \(thread desk:dana\)/,
      ),
    ]);
    await clock.advance(hours(44));
    expect(written.filter((l) => l.startsWith("• reminder"))).toHaveLength(11);
    expect(written.at(-1)).toBe(
      "• took back the question about refund-tool (expired: nobody answered in time)\n",
    );
    // The expense has no deadline: it still waits for dana, and its answer finishes the turn.
    const [expense] = await app.pauses.list({ tenantId: "acme", status: "pending" });
    const done = await app.resume(
      { pauseId: expense?.pauseId as string, decision: { approved: true } },
      { tenantId: "acme", ownerId: "dana", record: true },
    );
    expect(done.output).toEqual({
      text: "Refund: the call was rejected: nobody answered terminal-user-channel in time: nobody approved the refund within two days. Expense: booked 23.50 EUR for taxi to the client.",
    });
    expect(app.get(OfficeLedger).runs).toEqual(["expense-tool"]);
    expect(done.record?.pauses.map((p) => [p.step.toolCall?.tool, p.resolution]).sort()).toEqual([
      ["expense-tool", "replied"],
      ["refund-tool", "expired"],
    ]);
  });
});
