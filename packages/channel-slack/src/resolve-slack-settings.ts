import { SlackChannelError, SlackErrorCode } from "./slack-channel-error.js";
import { SLACK_DEFAULT_API_URL, SlackEnv } from "./slack-env.js";
import type { SlackSettings } from "./slack-settings.js";

/** The settings once the environment was read. @internal */
export interface ResolvedSlackSettings {
  readonly botToken: string;
  /** Undefined when neither given nor set: only the webhook needs it, and says so. */
  readonly signingSecret: string | undefined;
  /** Ends with `/`, as the WebClient expects. */
  readonly apiUrl: string;
}

function read(given: string | undefined, env: SlackSettings["env"], name: string): string | undefined {
  const value = (given ?? env?.[name] ?? "").trim();
  return value === "" ? undefined : value;
}

/** Reads what the settings leave open from the environment; throws {@link SlackChannelError} naming what to set. @internal */
export function resolveSlackSettings(settings: SlackSettings): ResolvedSlackSettings {
  const env = settings.env ?? process.env;
  const botToken = read(settings.botToken, env, SlackEnv.BotToken);
  if (botToken === undefined && settings.client === undefined) {
    throw new SlackChannelError(
      SlackErrorCode.MissingSetting,
      `No Slack bot token: set ${SlackEnv.BotToken} to the app's Bot User OAuth Token (xoxb-…, on its ` +
        '"OAuth & Permissions" page), or pass botToken to SlackAsker.with({ … }).',
    );
  }
  const apiUrl = read(settings.apiUrl, env, SlackEnv.ApiUrl) ?? SLACK_DEFAULT_API_URL;
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch (cause) {
    throw new SlackChannelError(
      SlackErrorCode.BadSetting,
      `${SlackEnv.ApiUrl} (or apiUrl) is "${apiUrl}", which is not a URL. Set it to the Web API's base, ` +
        `e.g. ${SLACK_DEFAULT_API_URL}, or leave it unset.`,
      { cause },
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new SlackChannelError(
      SlackErrorCode.BadSetting,
      `${SlackEnv.ApiUrl} (or apiUrl) must be an http(s) URL such as ${SLACK_DEFAULT_API_URL}; got "${apiUrl}".`,
    );
  }
  return {
    botToken: botToken ?? "",
    signingSecret: read(settings.signingSecret, env, SlackEnv.SigningSecret),
    apiUrl: apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/`,
  };
}

/** The signing secret, or an error that says where to find it. @internal */
export function requireSigningSecret(secret: string | undefined): string {
  if (secret !== undefined) return secret;
  throw new SlackChannelError(
    SlackErrorCode.MissingSetting,
    `No Slack signing secret: set ${SlackEnv.SigningSecret} to the app's Signing Secret (its "Basic ` +
      'Information" page, under App Credentials), or pass signingSecret to createSlackWebhook or SlackAsker.with. ' +
      "The webhook refuses to run without it: it is how requests are known to come from Slack.",
  );
}
