import { Agent } from "@agboss/core";
import { SignOffTool } from "./sign-off-tool.js";

const reviewer = (name: string) => ({
  name: `${name}-reviewer-agent`,
  description: `Reviews a release for ${name}`,
  prompt: `Review the release for ${name}; sign it off with the sign-off tool, then say approve or reject.`,
  model: "scripted/reviewer",
  tools: [SignOffTool],
});

/** Reviews a release for legal. */
@Agent(reviewer("legal"))
export class LegalReviewerAgent {}

/** Reviews a release for security. */
@Agent(reviewer("security"))
export class SecurityReviewerAgent {}

/** Reviews a release for finance. */
@Agent(reviewer("finance"))
export class FinanceReviewerAgent {}

/** Says what the reviewers decided. */
@Agent({
  name: "release-agent",
  description: "Announces the release decision",
  prompt: "Say whether the release goes out, and who signed it off.",
  model: "scripted/release",
})
export class ReleaseAgent {}
