import { Dto } from "@agboss/core";
import { z } from "zod";

/** What a returns tool did. */
export class ReturnsDoneDto extends Dto({ status: z.string() }) {}
