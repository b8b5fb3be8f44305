/** The kinds of component a decorator declares. */
export const ComponentKind = {
  Application: "application",
  Agent: "agent",
  Tool: "tool",
  Workflow: "workflow",
  WorkflowStart: "workflow-start",
  WorkflowFinish: "workflow-finish",
  ModelProvider: "model-provider",
  Injectable: "injectable",
  ChannelRole: "channel-role",
  Channel: "channel",
  ReplyInterpreter: "reply-interpreter",
} as const;
export type ComponentKind = (typeof ComponentKind)[keyof typeof ComponentKind];

/** The suffix a component's name must end with, by kind (`[name.kind-suffix]`). */
export const NAME_SUFFIX: Readonly<Record<ComponentKind, string | undefined>> = {
  application: "-application",
  agent: "-agent",
  tool: "-tool",
  workflow: "-workflow",
  "workflow-start": "-workflow-start",
  "workflow-finish": "-workflow-finish",
  "model-provider": "-model-provider",
  injectable: undefined,
  "channel-role": "-channel",
  channel: "-channel",
  "reply-interpreter": "-reply-interpreter",
};
