import type { ChannelAsk } from "./channel-ask.js";
import { Channel } from "./channel-decorators.js";
import type { ChannelHandler } from "./channel-of.js";
import { ChannelOutcome } from "./channel-outcome.js";

/** A channel that approves every call at once: no pause. For tests and trusted tools. */
@Channel({ name: "auto-approve-channel", description: "Approves every call at once" })
export class AutoApproveChannel implements ChannelHandler {
  send(_ask: ChannelAsk): Promise<ChannelOutcome> {
    return Promise.resolve(ChannelOutcome.decided({ approved: true }));
  }
}

/** A channel that rejects every call at once: no pause. For tests and disabled tools. */
@Channel({ name: "auto-reject-channel", description: "Rejects every call at once" })
export class AutoRejectChannel implements ChannelHandler {
  send(_ask: ChannelAsk): Promise<ChannelOutcome> {
    return Promise.resolve(ChannelOutcome.decided({ approved: false, reason: "rejected automatically" }));
  }
}
