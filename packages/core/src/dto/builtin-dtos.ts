import { z } from "zod";
import { Dto } from "./dto.js";

/** A workflow started by a text, e.g. a chat message or a webhook's summary. */
export class WorkflowStartTextDto extends Dto({ text: z.string().min(1, "text must not be empty") }) {}

/** A workflow that finishes with a text answer. */
export class WorkflowFinishTextDto extends Dto({ text: z.string() }) {}
