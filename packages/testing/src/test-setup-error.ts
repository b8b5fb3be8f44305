import { AgbossError } from "@agboss/core";
import { TestingErrorCode } from "./testing-error-code.js";

/** The testing kit was used in a way that cannot work; the message says what to do instead. */
export class TestSetupError extends AgbossError {
  static override readonly kind: string = "TestSetupError";

  constructor(message: string) {
    super(TestingErrorCode.Setup, message);
  }
}
