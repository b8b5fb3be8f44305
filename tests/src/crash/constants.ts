/** The tenant every execution of the crash suite runs for. */
export const CRASH_TENANT = "crash";
/** Who answers the refund approvals (a Channel pause: `answeredBy`). */
export const CRASH_MANAGER = "manager-7";
