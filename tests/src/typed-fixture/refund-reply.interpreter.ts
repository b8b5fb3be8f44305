import {
  DecidedBy,
  type InputOf,
  type OutputOf,
  ReplyInterpretation,
  ReplyInterpreter,
  type ReplyInterpreterHandler,
} from "@agboss/core";

/** Reads "approve", "half" or "reject: <why>"; with generated types `ask.arguments` is the refund's DTO. */
@ReplyInterpreter({
  name: "refund-reply-interpreter",
  description: "Reads a finance manager's short reply to a refund",
  decidedBy: DecidedBy.Code,
})
export class RefundReplyInterpreter implements ReplyInterpreterHandler<RefundReplyInterpreter> {
  interpret(input: InputOf<RefundReplyInterpreter>): ReplyInterpretation<OutputOf<RefundReplyInterpreter>> {
    const words = input.reply.trim().toLowerCase();
    if (words === "approve") return ReplyInterpretation.understood({ approved: true });
    if (words === "half") {
      const amountCents = Math.floor(Number(input.ask.arguments.amountCents) / 2);
      return ReplyInterpretation.understood({
        approved: true,
        overrideArguments: { ...input.ask.arguments, amountCents },
      });
    }
    if (words.startsWith("reject:"))
      return ReplyInterpretation.understood({
        approved: false,
        reason: words.slice("reject:".length).trim(),
      });
    return ReplyInterpretation.notUnderstood({ reason: "Answer 'approve', 'half' or 'reject: <why>'." });
  }
}
