/** The name of {@link TerminalUserChannel}: the channel its pauses are listed under in `app.pauses.list`. */
export const TERMINAL_USER_CHANNEL = "terminal-user-channel";
