import { describe, expect, test } from "vitest";
import {
  checkCredentialShape,
  checkResumeRequest,
  MAX_ANSWER_BYTES,
  MAX_REPLY_CHARS,
  MAX_RESPONDER_CHARS,
} from "../../src/answering/answer-checks.js";
import { MAX_REASON_CHARS, ToolCallApprovalDecisionDto } from "../../src/channels/approval-dtos.js";
import { parseDto } from "../../src/dto/dto.js";
import { DtoValidationError } from "../../src/errors/dto-validation-error.js";

const issuesOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DtoValidationError);
    expect((error as DtoValidationError).code).toBe("dto.invalid");
    return (error as DtoValidationError).issues.map((i) => i.path);
  }
  throw new Error("expected a DtoValidationError");
};

describe("what an answer may carry", () => {
  test("the credential must be an object of texts: a missing one, an object or an array as tenantId, and over-long ids are refused with a coded error", () => {
    expect(issuesOf(() => checkCredentialShape(undefined))).toEqual([""]);
    expect(issuesOf(() => checkCredentialShape(null))).toEqual([""]);
    expect(issuesOf(() => checkCredentialShape({ tenantId: { id: "acme" }, answeredBy: "m" }))).toEqual([
      "tenantId",
    ]);
    expect(issuesOf(() => checkCredentialShape({ tenantId: ["acme"], ownerId: "alice" }))).toEqual([
      "tenantId",
    ]);
    const long = "x".repeat(MAX_RESPONDER_CHARS + 1);
    expect(issuesOf(() => checkCredentialShape({ tenantId: "acme", answeredBy: long }))).toEqual([
      "answeredBy",
    ]);
    expect(issuesOf(() => checkCredentialShape({ ownerId: long }))).toEqual(["ownerId"]);
    const fine = { tenantId: "acme", answeredBy: "x".repeat(MAX_RESPONDER_CHARS) };
    expect(checkCredentialShape(fine)).toEqual(fine);
  });

  test("a reply over the limit and a decision or answer over the JSON size limit are refused", () => {
    expect(
      issuesOf(() => checkResumeRequest({ pauseId: "p", reply: "y".repeat(MAX_REPLY_CHARS + 1) })),
    ).toEqual(["reply"]);
    expect(checkResumeRequest({ pauseId: "p", reply: "y".repeat(MAX_REPLY_CHARS) }).reply).toHaveLength(
      MAX_REPLY_CHARS,
    );
    const huge = { approved: true, overrideArguments: { memo: "z".repeat(MAX_ANSWER_BYTES) } };
    expect(issuesOf(() => checkResumeRequest({ pauseId: "p", decision: huge }))).toEqual(["decision"]);
    expect(
      issuesOf(() => checkResumeRequest({ pauseId: "p", answer: { note: "z".repeat(MAX_ANSWER_BYTES) } })),
    ).toEqual(["answer"]);
  });

  test("a decision's reason is at most MAX_REASON_CHARS characters", () => {
    const at = { approved: false, reason: "r".repeat(MAX_REASON_CHARS) };
    expect(parseDto(ToolCallApprovalDecisionDto, at, "the decision").reason).toHaveLength(MAX_REASON_CHARS);
    expect(() =>
      parseDto(
        ToolCallApprovalDecisionDto,
        { approved: false, reason: "r".repeat(MAX_REASON_CHARS + 1) },
        "d",
      ),
    ).toThrow(DtoValidationError);
  });
});
