import { Dto } from "@agboss/core";
import { z } from "zod";

/** What an office tool did. */
export class OfficeDoneDto extends Dto({ status: z.string() }) {}
