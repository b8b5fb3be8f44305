/** The stable codes of the errors the testing kit throws. */
export const TestingErrorCode = {
  /** A component called its model and the test scripted none for it. */
  ModelUnscripted: "testing.model-unscripted",
  /** A component asked its model for more turns than the test scripted. */
  ModelScriptExhausted: "testing.model-script-exhausted",
  /** The kit was used in a way that cannot work, e.g. `mockLlm` of a tool. */
  Setup: "testing.setup",
} as const;

/** One of the codes in {@link TestingErrorCode}. */
export type TestingErrorCode = (typeof TestingErrorCode)[keyof typeof TestingErrorCode];
