import { PauseResolution, type PauseWithdrawalResolution } from "@agboss/core";
import { escapeMrkdwn, mentionOf, slackDate } from "./mrkdwn.js";

/** What became of a question, as its closed message says it. @internal */
export type QuestionOutcome =
  | { readonly kind: "approved"; readonly by: string; readonly at: number | string }
  | {
      readonly kind: "rejected";
      readonly by: string;
      readonly at: number | string;
      readonly reason?: string | undefined;
    }
  | { readonly kind: "answered"; readonly by: string; readonly at: number | string }
  | {
      readonly kind: "withdrawn";
      readonly resolution: PauseWithdrawalResolution;
      readonly note?: string | undefined;
    }
  | { readonly kind: "closed"; readonly at?: number | string | undefined };

/** One mrkdwn line for a closed question. @internal */
export function statusLine(outcome: QuestionOutcome): string {
  switch (outcome.kind) {
    case "approved":
      return `:white_check_mark: Approved by ${mentionOf(outcome.by)} ${slackDate(outcome.at)}`;
    case "rejected": {
      const why = outcome.reason === undefined ? "" : `: ${escapeMrkdwn(outcome.reason)}`;
      return `:x: Rejected by ${mentionOf(outcome.by)} ${slackDate(outcome.at)}${why}`;
    }
    case "answered":
      return `:speech_balloon: Answered by ${mentionOf(outcome.by)} ${slackDate(outcome.at)}`;
    case "withdrawn":
      if (outcome.note !== undefined) return outcome.note;
      switch (outcome.resolution) {
        case PauseResolution.Cancelled:
          return ":no_entry_sign: Withdrawn: the request was cancelled, no answer is needed.";
        case PauseResolution.Escalated:
          return ":arrow_up: Escalated: nobody answered in time, so someone else was asked.";
        case PauseResolution.Expired:
          return ":hourglass: Expired: nobody answered in time.";
        default:
          return ":no_entry_sign: Withdrawn: no longer needed.";
      }
    case "closed":
      return `:lock: Closed${outcome.at === undefined ? "" : ` ${slackDate(outcome.at)}`}: this question takes no more answers.`;
  }
}
