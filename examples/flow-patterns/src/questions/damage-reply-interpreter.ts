import {
  DecidedBy,
  type InputOf,
  ReplyInterpretation,
  ReplyInterpreter,
  type ReplyInterpreterHandler,
} from "@agboss/core";
import type { DamageAssessmentDto } from "./damage-assessment-dto.js";

/**
 * Reads a refund in words: "full", "half", "none" or an amount in euros such as 12.50. A full refund
 * means the item is written off; anything less puts it back on the shelf.
 */
@ReplyInterpreter({
  name: "damage-reply-interpreter",
  description: "Reads full, half, none or an amount in euros",
  decidedBy: DecidedBy.Code,
})
export class DamageReplyInterpreter
  implements ReplyInterpreterHandler<DamageReplyInterpreter, DamageAssessmentDto>
{
  interpret({ ask, reply }: InputOf<DamageReplyInterpreter>): ReplyInterpretation<DamageAssessmentDto> {
    const paid = Number(ask.arguments.paidCents);
    const words = reply.trim().toLowerCase();
    if (words === "full") return ReplyInterpretation.understood({ refundCents: paid, restock: false });
    if (words === "half") {
      return ReplyInterpretation.understood({ refundCents: Math.floor(paid / 2), restock: true });
    }
    if (words === "none") return ReplyInterpretation.understood({ refundCents: 0, restock: true });
    if (/^\d+(\.\d{1,2})?$/.test(words)) {
      return ReplyInterpretation.understood({ refundCents: Math.round(Number(words) * 100), restock: true });
    }
    return ReplyInterpretation.notUnderstood({
      reason: 'Say "full", "half", "none" or an amount in euros such as 12.50.',
    });
  }
}
