import {
  type App,
  type InputOf,
  type OutputOf,
  ReplyInterpretation,
  type ReplyInterpreterHandler,
  type ReplyInterpreterInput,
  type ToolCallApprovalDecisionDto,
} from "@agboss/core";
import { expectTypeOf, test } from "vitest";
import type { RefundReplyInterpreter } from "../../src/fixtures/interpreter-app.js";

// Type-level halves of RP-02 and RP-08, checked by tsc in vitest's typecheck mode (the runtime half is in
// reply-interpreters.test.ts). An unused @ts-expect-error is an error too, so each line below fails
// the test when the typing it guards is loosened.

test("[RP-08] a code interpreter is typed from its role: InputOf is the reply's input, OutputOf the decision", () => {
  expectTypeOf<InputOf<RefundReplyInterpreter>>().toEqualTypeOf<ReplyInterpreterInput>();
  expectTypeOf<OutputOf<RefundReplyInterpreter>>().toEqualTypeOf<ToolCallApprovalDecisionDto>();
  expectTypeOf<RefundReplyInterpreter>().toExtend<ReplyInterpreterHandler<RefundReplyInterpreter>>();
});

test("[RP-08] interpret returns a ReplyInterpretation sync or async", () => {
  type Returned = ReturnType<ReplyInterpreterHandler<RefundReplyInterpreter>["interpret"]>;
  expectTypeOf<ReplyInterpretation<ToolCallApprovalDecisionDto>>().toExtend<Returned>();
  expectTypeOf<Promise<ReplyInterpretation<ToolCallApprovalDecisionDto>>>().toExtend<Returned>();
  expectTypeOf(ReplyInterpretation.understood({ approved: true })).toExtend<Returned>();
  expectTypeOf(ReplyInterpretation.notUnderstood({ reason: "unclear" })).toExtend<Returned>();
});

test("[RP-08] a plain object does not type-check as a ReplyInterpretation", () => {
  // @ts-expect-error a plain object is not a ReplyInterpretation
  const plain: ReplyInterpretation<ToolCallApprovalDecisionDto> = {
    kind: "understood",
    decision: { approved: true },
    reason: undefined,
  };
  expectTypeOf(plain).not.toBeAny();

  class PlainObjectInterpreter implements ReplyInterpreterHandler<RefundReplyInterpreter> {
    // @ts-expect-error interpret must return ReplyInterpretation.understood(…) / notUnderstood(…)
    interpret() {
      return { kind: "understood" as const, decision: { approved: true }, reason: undefined };
    }
  }
  expectTypeOf<PlainObjectInterpreter>().not.toBeAny();
});

test("[RP-08] the decision must be the interpreter's output type", () => {
  // @ts-expect-error the decision must be a ToolCallApprovalDecisionDto
  const wrong: ReplyInterpretation<OutputOf<RefundReplyInterpreter>> = ReplyInterpretation.understood({
    approved: "yes",
  });
  expectTypeOf(wrong).not.toBeAny();
});

test("[RP-02] a resume request carries a decision or a reply, never both", () => {
  type Request = Parameters<App["resume"]>[0];
  expectTypeOf<{ pauseId: string; decision: { approved: true } }>().toExtend<Request>();
  expectTypeOf<{ pauseId: string; reply: string }>().toExtend<Request>();
  expectTypeOf<{ pauseId: string; reply: string; decision: { approved: true } }>().not.toExtend<Request>();
});
