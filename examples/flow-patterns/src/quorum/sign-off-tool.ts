import { TerminalUserChannel } from "@agboss/channel-terminal";
import { Tool, type ToolHandler } from "@agboss/core";
import { SignedDto, SignOffDto } from "./sign-off-dto.js";

/** Records a reviewer's sign-off, once the thread's owner approved it in the terminal. */
@Tool({
  name: "sign-off-tool",
  description: "Signs a release off for one reviewer",
  input: SignOffDto,
  output: SignedDto,
  channel: TerminalUserChannel,
})
export class SignOffTool implements ToolHandler<SignOffDto, SignedDto> {
  run({ reviewer, release }: SignOffDto): Promise<SignedDto> {
    return Promise.resolve({ status: `${reviewer} signed ${release} off` });
  }
}
