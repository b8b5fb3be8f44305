import { randomUUID } from "node:crypto";
import { SlackAsker } from "@agboss/channel-slack";
import {
  Agent,
  Application,
  Channel,
  type ChannelAsk,
  ChannelOf,
  type ChannelOutcome,
  ChannelRole,
  type ChannelWithdrawal,
  DecidedBy,
  Dto,
  ExecutionContext,
  Injectable,
  type InputOf,
  type OutputOf,
  PauseAnswerer,
  type Provider,
  parseDto,
  ReplyInterpretation,
  ReplyInterpreter,
  type ReplyInterpreterHandler,
  start,
  Tool,
  type ToolHandler,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { z } from "zod";

/** The fields of a deployment. */
export const DEPLOYMENT_FIELDS = {
  service: z.string().regex(/^[a-z][a-z0-9-]*$/, "a service name: lowercase letters, digits and dashes"),
  version: z.string().regex(/^\d+\.\d+\.\d+$/, "a version such as 1.4.2"),
  environment: z.enum(["staging", "production"]),
};

/** A deployment the agent wants to run: what the release manager approves. */
export class DeploymentDto extends Dto(DEPLOYMENT_FIELDS) {}

/** What the deploy tool reports. */
export class DeploymentDoneDto extends Dto({ deploymentId: z.string(), status: z.string() }) {}

/** Where the deploy gate asks: the Slack conversation's id. */
@Injectable()
export class DeployGateSettings {
  constructor(readonly slackChannel: string = "C0DEPLOYS") {}

  /** A provider that asks in `slackChannel`. */
  static in(slackChannel: string): Provider {
    return { provide: DeployGateSettings, useValue: new DeployGateSettings(slackChannel) };
  }
}

/** One deployment that ran. */
export interface Deployment extends DeploymentDto {
  readonly deploymentId: string;
  readonly requestedBy: string;
  readonly at: string;
}

/** Runs deployments (here: records them). Replace it with your CD system's client. */
@Injectable({ deps: [ExecutionContext] })
export class Deployer {
  readonly #done: Deployment[] = [];
  constructor(private readonly context: ExecutionContext) {}

  deploy(request: DeploymentDto): Deployment {
    const deployment = {
      ...request,
      deploymentId: `dep_${randomUUID().slice(0, 8)}`,
      requestedBy: this.context.ownerId,
      at: new Date().toISOString(),
    };
    this.#done.push(deployment);
    return deployment;
  }

  /** Every deployment this process ran, oldest first. */
  list(): readonly Deployment[] {
    return [...this.#done];
  }
}

/** How to answer in words, shown under the buttons. */
export const REPLY_HINT = 'Or reply in this thread: "ship it" to deploy, "hold: <why>" to refuse.';

/** Reads a release manager's reply in the question's thread. */
@ReplyInterpreter({
  name: "deploy-reply-interpreter",
  description: "Reads ship it, lgtm, or hold: <why>",
  decidedBy: DecidedBy.Code,
})
export class DeployReplyInterpreter implements ReplyInterpreterHandler<DeployReplyInterpreter> {
  interpret({
    reply,
  }: InputOf<DeployReplyInterpreter>): ReplyInterpretation<OutputOf<DeployReplyInterpreter>> {
    // Slack sends mentions as <@U…>: "@bot ship it" reads as "ship it".
    const words = reply.replace(/<@[A-Z0-9]+>/g, "").trim();
    if (/^(ship it|lgtm|approve[d]?|go)[.!]*$/i.test(words))
      return ReplyInterpretation.understood({ approved: true });
    const hold = /^(hold|reject|no)\s*:\s*(.+)$/i.exec(words);
    if (hold?.[2] !== undefined)
      return ReplyInterpretation.understood({ approved: false, reason: hold[2].trim() });
    return ReplyInterpretation.notUnderstood({
      reason: 'Reply "ship it" to deploy, or "hold: <why>" to refuse.',
    });
  }
}

/** A release manager lets a deployment through, or holds it. */
@ChannelRole({
  name: "deploy-approval-channel",
  description: "A release manager approves deployments",
  approves: DeploymentDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: DeployReplyInterpreter,
})
export abstract class DeployApprovalChannel extends ChannelOf<DeployApprovalChannel> {}

/** Asks in the deploy conversation in Slack; takes the question back when the request is cancelled. */
@Channel({
  name: "slack-deploy-approval-channel",
  description: "Asks the release managers in Slack",
  deps: [SlackAsker, DeployGateSettings, ExecutionContext],
})
export class SlackDeployApprovalChannel extends DeployApprovalChannel {
  constructor(
    private readonly slack: SlackAsker,
    private readonly settings: DeployGateSettings,
    private readonly context: ExecutionContext,
  ) {
    super();
  }

  send(ask: ChannelAsk<DeployApprovalChannel>): Promise<ChannelOutcome<DeployApprovalChannel>> {
    // Validated by the tool's DTO already, so the values hold no mrkdwn to escape.
    const { service, version, environment } = parseDto(DeploymentDto, ask.value.arguments, "the deployment");
    const urgent = environment === "production" ? ":rotating_light: " : "";
    return this.slack.askApproval(ask, {
      channel: this.settings.slackChannel,
      text: `${urgent}Deploy *${service}* ${version} to *${environment}*?`,
      fields: {
        Service: service,
        Version: version,
        Environment: environment,
        "Requested by": this.context.ownerId,
      },
      approveLabel: "Deploy",
      rejectLabel: "Hold",
      hint: REPLY_HINT,
    });
  }

  override withdraw(withdrawal: ChannelWithdrawal<DeployApprovalChannel>): Promise<void> {
    return this.slack.withdraw(withdrawal, { channel: this.settings.slackChannel });
  }
}

/** Deploys a version of a service, once a release manager let it through. */
@Tool({
  name: "deploy-tool",
  description: "Deploys a version of a service to an environment",
  input: DeploymentDto,
  output: DeploymentDoneDto,
  channel: DeployApprovalChannel,
  deps: [Deployer],
})
export class DeployTool implements ToolHandler<DeploymentDto, DeploymentDoneDto> {
  constructor(private readonly deployer: Deployer) {}

  run(request: DeploymentDto): Promise<DeploymentDoneDto> {
    const { deploymentId, service, version, environment } = this.deployer.deploy(request);
    return Promise.resolve({ deploymentId, status: `${service} ${version} is live on ${environment}` });
  }
}

/** The model id the agent names; the scripted provider serves it (models.ts). */
export const DEPLOY_MODEL = "scripted/deploy-agent";

@Agent({
  name: "deploy-agent",
  description: "Deploys what a developer asks for, through the gate",
  prompt:
    "A developer asks for a deployment. Call deploy-tool with the service, the version and the environment. " +
    "Then say in one sentence what happened; if it was held, say why.",
  model: DEPLOY_MODEL,
  tools: [DeployTool],
})
export class DeployAgent {}

@WorkflowStart({
  name: "deploy-workflow-start",
  description: "A deployment request",
  input: WorkflowStartTextDto,
})
export class DeployWorkflowStart {}

@WorkflowFinish({
  name: "deploy-workflow-finish",
  description: "What happened",
  output: WorkflowFinishTextDto,
})
export class DeployWorkflowFinish {}

@Workflow({
  name: "deploy-workflow",
  version: "1.0.0",
  flow: [
    start(DeployWorkflowStart)
      .returns(WorkflowStartTextDto)
      .toAgent(DeployAgent)
      .toFinish(DeployWorkflowFinish),
  ],
})
export class DeployWorkflow {}

/**
 * The deploy gate. `SlackAsker` reads SLACK_BOT_TOKEN / SLACK_SIGNING_SECRET / SLACK_API_URL; the
 * server passes `SlackAsker.with(…)` and `DeployGateSettings.in(…)` when it runs against the local
 * stand-in for Slack.
 */
@Application({
  name: "deploy-gate-application",
  workflows: [DeployWorkflow],
  providers: [DeployGateSettings, Deployer, SlackAsker, SlackDeployApprovalChannel],
})
export class DeployGateApplication {}

/** The request as the agent reads it. */
export function requestText(request: DeploymentDto): string {
  return `Deploy ${request.service} ${request.version} to ${request.environment}.`;
}

/** The thread of a deployment: one conversation per service, version and environment. */
export function threadOf(request: DeploymentDto): string {
  return `deploy:${request.service}@${request.version}:${request.environment}`;
}
