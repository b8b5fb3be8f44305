import { Injectable } from "@agboss/core";

/** Counts what the returns tools did in this process, so the program can show each ran once. */
@Injectable()
export class ReturnsLedger {
  readonly runs: string[] = [];
}
