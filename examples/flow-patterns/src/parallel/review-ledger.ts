import { Injectable } from "@agboss/core";

/** Counts what the review tools did in this process, so the program can show each ran once. */
@Injectable()
export class ReviewLedger {
  readonly runs: string[] = [];
}
