import {
  type App,
  Dto,
  type ExecutionOutput,
  type WorkflowFinishTextDto,
  type WorkflowInput,
  type WorkflowOutput,
  WorkflowStart,
  WorkflowStartOf,
  WorkflowStartTextDto,
} from "@agboss/core";
import { expectTypeOf, test } from "vitest";
import { z } from "zod";

// Type-level checks of app.execute, run by tsc in vitest's typecheck mode. An unused @ts-expect-error
// is an error too, so each case fails its test when the typing it guards is loosened.

class RefundRequestDto extends Dto({ orderId: z.string(), amountCents: z.number().int() }) {}
class RefundAnswerDto extends Dto({ refundId: z.string(), refundedCents: z.number().int() }) {}

@WorkflowStart({
  name: "typed-refund-workflow-start",
  description: "A refund request",
  input: RefundRequestDto,
})
class TypedRefundStart extends WorkflowStartOf<RefundRequestDto, RefundAnswerDto> {}

@WorkflowStart({ name: "plain-workflow-start", description: "Text in", input: WorkflowStartTextDto })
class PlainStart {}

declare const app: App;

test("[RP-12] a start that extends WorkflowStartOf types execute's input and result.output", async () => {
  expectTypeOf<WorkflowInput<typeof TypedRefundStart>>().toEqualTypeOf<RefundRequestDto>();
  expectTypeOf<WorkflowOutput<typeof TypedRefundStart>>().toEqualTypeOf<RefundAnswerDto>();

  const result = await app.execute(
    TypedRefundStart,
    { orderId: "ord_1", amountCents: 1200 },
    { ownerId: "u1" },
  );
  expectTypeOf(result).toEqualTypeOf<ExecutionOutput<RefundAnswerDto>>();
  expectTypeOf(result.output).toEqualTypeOf<RefundAnswerDto | undefined>();
  if (result.output !== undefined) expectTypeOf(result.output.refundedCents).toBeNumber();

  // @ts-expect-error a field the input DTO does not declare
  await app.execute(TypedRefundStart, { orderId: "ord_1", amountCents: 1200, note: "x" }, { ownerId: "u1" });
  // @ts-expect-error a required field is missing
  await app.execute(TypedRefundStart, { orderId: "ord_1" }, { ownerId: "u1" });
  // @ts-expect-error a field of the wrong type
  await app.execute(TypedRefundStart, { orderId: "ord_1", amountCents: "12" }, { ownerId: "u1" });
  // @ts-expect-error the output is the finish's DTO, not text
  const text: string | undefined = result.output?.text;
  void text;
});

test("[RP-12] a start that declares nothing takes any record and gives unknown, as before", async () => {
  expectTypeOf<WorkflowInput<typeof PlainStart>>().toEqualTypeOf<Record<string, unknown>>();
  expectTypeOf<WorkflowOutput<typeof PlainStart>>().toBeUnknown();
  const result = await app.execute(PlainStart, { text: "hello" }, { ownerId: "u1" });
  expectTypeOf(result.output).toBeUnknown();
  // any record still compiles: the start's DTO validates it at run time
  await app.execute(PlainStart, { anything: 1 }, { ownerId: "u1" });
});

test("[RP-12] @WorkflowStart refuses a class that declares another input than its input DTO", () => {
  // @ts-expect-error the class declares RefundRequestDto, the decorator names WorkflowStartTextDto
  @WorkflowStart({
    name: "mismatched-workflow-start",
    description: "Mismatched",
    input: WorkflowStartTextDto,
  })
  class MismatchedStart extends WorkflowStartOf<RefundRequestDto, WorkflowFinishTextDto> {}

  @WorkflowStart({ name: "matched-workflow-start", description: "Matched", input: WorkflowStartTextDto })
  class MatchedStart extends WorkflowStartOf<WorkflowStartTextDto, WorkflowFinishTextDto> {}

  // a start class with members of its own and no declared types is accepted as before
  @WorkflowStart({ name: "busy-workflow-start", description: "Has members", input: WorkflowStartTextDto })
  class BusyStart {
    describe(): string {
      return "busy";
    }
  }

  expectTypeOf<WorkflowOutput<typeof MatchedStart>>().toEqualTypeOf<WorkflowFinishTextDto>();
  void [MismatchedStart, BusyStart];
});
