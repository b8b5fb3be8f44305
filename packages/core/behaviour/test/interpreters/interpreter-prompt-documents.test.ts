import { callTool, ExecutionStatus, replyWith, ToolCallApprovalDecisionDto } from "@agboss/core";
import { testWith } from "@agboss/testing";
import { expect } from "vitest";
import {
  PolicyAgent,
  PolicyApplication,
  PolicyExpenseTool,
  PolicyReplyInterpreter,
  PolicyWorkflowStart,
} from "../../src/fixtures/policy-app.js";

const test = testWith(PolicyApplication);

test("[RP-04] a model interpreter's promptUrls are read at start and follow its prompt in the model's instructions", async ({
  app,
  mockLlm,
}) => {
  mockLlm(PolicyAgent).thenReturn(
    callTool(PolicyExpenseTool, { purpose: "hotel", amountCents: 14_000 }),
    replyWith("Booked"),
  );
  const interpreter = mockLlm(PolicyReplyInterpreter);
  interpreter.thenReturn(replyWith(ToolCallApprovalDecisionDto, { approved: true }));
  const paused = await app.execute(PolicyWorkflowStart, { text: "book the hotel" }, { ownerId: "alice" });
  const pauseId = paused.pending[0]?.pauseId as string;
  const done = await app.resume({ pauseId, reply: "yes, receipt attached" }, { ownerId: "alice" });
  expect(done.status).toBe(ExecutionStatus.Completed);
  expect(interpreter.calls[0]?.messages[0]).toEqual({
    role: "system",
    content:
      "Decide whether the owner approves the expense.\n\n" +
      "Expenses over 100 EUR need a receipt.\nA reply that mentions a receipt approves.",
  });
});
