/**
 * The model ids the desk names. They are decorator options, so they are read once, when this module is
 * imported: set `REFUND_DESK_AGENT_MODEL` / `REFUND_DESK_REPLY_MODEL` before the process starts to pick
 * other models from a real endpoint (OpenRouter ids look like `openai/gpt-4o-mini`).
 */
export const AGENT_MODEL = process.env.REFUND_DESK_AGENT_MODEL ?? "gpt-4o-mini";
export const REPLY_MODEL = process.env.REFUND_DESK_REPLY_MODEL ?? "gpt-4o-mini";
