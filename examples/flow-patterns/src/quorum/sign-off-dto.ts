import { Dto } from "@agboss/core";
import { z } from "zod";

/** A reviewer's sign-off on a release. */
export class SignOffDto extends Dto({
  reviewer: z.string().min(1),
  release: z.string().min(1),
}) {}

/** What a sign-off tool did. */
export class SignedDto extends Dto({ status: z.string() }) {}
