import { Injectable } from "@agboss/core";

/** Counts what the office tools did in this process, so the program can show each ran once. */
@Injectable()
export class OfficeLedger {
  readonly runs: string[] = [];
}
