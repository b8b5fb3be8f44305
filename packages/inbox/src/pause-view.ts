import {
  type AnyClass,
  componentOf,
  type DtoClass,
  dtoJsonSchema,
  isSensitive,
  maskWith,
  PauseAnswerer,
  PauseKind,
} from "@agboss/core";
import type { AppInternals } from "@agboss/core/internal";
import type { PauseRecord } from "@agboss/core/store";
import type { InboxPause, JsonSchema } from "./inbox-types.js";

type Assembled = AppInternals["assembled"];
type ZodType = Parameters<typeof isSensitive>[0];
type Tool =
  NonNullable<ReturnType<Assembled["agents"]["get"]>>["tools"] extends ReadonlyMap<string, infer T>
    ? T
    : never;

/** The tool a pause asks about. */
function toolOf(assembled: Assembled, pause: PauseRecord): Tool | undefined {
  for (const agent of assembled.agents.values()) {
    if (agent.name === pause.agent) return agent.tools.get(pause.ask.tool);
  }
  return undefined;
}

function descriptionOf(cls: AnyClass | undefined): string | undefined {
  const description = componentOf<{ description?: unknown }>(cls)?.options.description;
  return typeof description === "string" ? description : undefined;
}

/** The top-level fields of a DTO marked `sensitive(…)`, through optional and default wrappers. */
export function sensitiveFields(dto: DtoClass): string[] {
  const shape = (dto.schema as unknown as { _zod: { def: { shape?: Record<string, ZodType> } } })._zod.def
    .shape;
  const fields: string[] = [];
  for (const [name, field] of Object.entries(shape ?? {})) {
    let schema: ZodType | undefined = field;
    while (schema !== undefined) {
      if (isSensitive(schema)) {
        fields.push(name);
        break;
      }
      const def: { type: string; innerType?: ZodType } = (
        schema as unknown as { _zod: { def: { type: string; innerType?: ZodType } } }
      )._zod.def;
      schema = ["optional", "nullable", "default", "readonly"].includes(def.type) ? def.innerType : undefined;
    }
  }
  return fields;
}

/** What the views of one tool share, made once. */
interface ToolForms {
  readonly arguments: JsonSchema;
  readonly answer: JsonSchema | undefined;
  readonly sensitive: readonly string[];
}

/** Turns pause records into what the page shows; the DTOs' JSON Schemas are made once per tool. */
export class PauseViews {
  readonly #assembled: Assembled;
  readonly #forms = new Map<Tool, ToolForms>();

  constructor(assembled: Assembled) {
    this.#assembled = assembled;
  }

  /** The tool a pause asks about, as the application declares it. */
  toolOf(pause: PauseRecord): Tool | undefined {
    return toolOf(this.#assembled, pause);
  }

  /** The top-level sensitive fields of the tool's input. */
  sensitiveOf(pause: PauseRecord): readonly string[] {
    const tool = this.toolOf(pause);
    return tool === undefined ? [] : this.#formsOf(tool).sensitive;
  }

  #formsOf(tool: Tool): ToolForms {
    let forms = this.#forms.get(tool);
    if (forms === undefined) {
      const input = tool.options.input;
      const sensitive = sensitiveFields(input);
      const schema = dtoJsonSchema(input) as { properties?: Record<string, Record<string, unknown>> };
      const properties = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([name, field]) => [
          name,
          sensitive.includes(name) ? { ...field, "x-sensitive": true } : field,
        ]),
      );
      const answer = tool.channel?.answer;
      forms = {
        arguments: { ...schema, properties },
        answer: answer === undefined ? undefined : dtoJsonSchema(answer),
        sensitive,
      };
      this.#forms.set(tool, forms);
    }
    return forms;
  }

  /** The pause as the page shows it: its arguments masked, its forms' schemas. */
  view(pause: PauseRecord): InboxPause {
    const tool = this.toolOf(pause);
    const forms = tool === undefined ? undefined : this.#formsOf(tool);
    const channel = tool?.channel;
    const args = (
      tool === undefined ? pause.ask.arguments : maskWith(tool.options.input.schema, pause.ask.arguments)
    ) as Record<string, unknown>;
    return {
      pauseId: pause.pauseId,
      kind: channel?.answer === undefined ? PauseKind.Approval : PauseKind.Question,
      answeredBy: pause.answeredBy === PauseAnswerer.Channel ? "channel" : "thread-owner",
      role: pause.channel,
      roleDescription: descriptionOf(channel?.cls),
      workflow: { name: pause.step.workflow.name, version: pause.step.workflow.version },
      agent: pause.agent,
      tool: pause.ask.tool,
      toolDescription: descriptionOf(tool?.cls),
      arguments: args,
      threadId: pause.threadId,
      executionId: pause.executionId,
      rootExecutionId: pause.rootExecutionId,
      askedAt: new Date(pause.askedAt).toISOString(),
      readsReplies: channel?.replyInterpreter !== undefined,
      schemas: {
        arguments: forms?.arguments ?? { type: "object" },
        ...(forms?.answer === undefined ? {} : { answer: forms.answer }),
      },
    };
  }
}
