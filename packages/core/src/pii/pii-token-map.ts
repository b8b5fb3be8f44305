/** What a token stands for: the text that was hidden, and the value as it was typed. @internal */
interface Hidden {
  readonly text: string;
  readonly value: unknown;
}

const TOKEN = /⟦pii:[^⟧\s]{1,12}⟧/g;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The text form of a value worth hiding: strings of 3 or more characters, numbers of 4 or more
 * digits (shorter ones would hide every "12" in a conversation). @internal
 */
export function hideableText(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim().length >= 3 ? value : undefined;
  if (typeof value === "number" || typeof value === "bigint") {
    const text = String(value);
    return text.replace(/\D/g, "").length >= 4 ? text : undefined;
  }
  return undefined;
}

/**
 * The tokens of one model call: values are numbered in the order they first appear in what the model
 * reads, so a conversation read again on its next turn gets the same tokens and nothing needs keeping.
 * @internal
 */
export class PiiTokenMap {
  readonly #needles = new Map<string, Hidden>();
  readonly #tokens = new Map<string, string>();
  readonly #hidden = new Map<string, Hidden>();
  #pattern: RegExp | undefined;

  /** Adds a value to hide (its text, and its JSON-escaped text when that differs). */
  add(value: unknown): void {
    const text = hideableText(value);
    // A token left in the conversation (one a model made up) is no value: hiding it would renumber it.
    if (text === undefined || text.includes("⟦pii:") || this.#needles.has(text)) return;
    const hidden = { text, value };
    this.#needles.set(text, hidden);
    const escaped = JSON.stringify(text).slice(1, -1);
    if (escaped !== text && !this.#needles.has(escaped)) this.#needles.set(escaped, hidden);
    this.#pattern = undefined;
  }

  /** True when there is nothing to hide. */
  get empty(): boolean {
    return this.#needles.size === 0;
  }

  /** `text` with every value to hide replaced by its token. */
  hide(text: string): string {
    if (this.#needles.size === 0) return text;
    this.#pattern ??= new RegExp(
      [...this.#needles.keys()]
        .sort((a, b) => b.length - a.length)
        .map(escapeRegExp)
        .join("|"),
      "g",
    );
    return text.replace(this.#pattern, (found) => this.#tokenOf(this.#needles.get(found) as Hidden));
  }

  /** A copy of a JSON value with its strings hidden, and its numbers when they are values to hide. */
  hideDeep(value: unknown): unknown {
    if (typeof value === "string") return this.hide(value);
    if (typeof value === "number") {
      const hidden = this.#needles.get(String(value));
      return hidden === undefined ? value : this.#tokenOf(hidden);
    }
    if (Array.isArray(value)) return value.map((item) => this.hideDeep(item));
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.hideDeep(v)]));
    }
    return value;
  }

  /** `text` with known tokens revealed; unknown ones are left and added to `unknown`. */
  reveal(text: string, unknown: Set<string>): string {
    return text.replace(TOKEN, (token) => {
      const hidden = this.#hidden.get(token);
      if (hidden === undefined) unknown.add(token);
      return hidden?.text ?? token;
    });
  }

  /** A copy of a JSON value with tokens revealed; a string that is one token gets the value as it was typed. */
  revealDeep(value: unknown, unknown: Set<string>): unknown {
    if (typeof value === "string") {
      const whole = this.#hidden.get(value);
      return whole === undefined ? this.reveal(value, unknown) : whole.value;
    }
    if (Array.isArray(value)) return value.map((item) => this.revealDeep(item, unknown));
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.revealDeep(v, unknown)]));
    }
    return value;
  }

  #tokenOf(hidden: Hidden): string {
    let token = this.#tokens.get(hidden.text);
    if (token === undefined) {
      token = `⟦pii:${this.#tokens.size + 1}⟧`;
      this.#tokens.set(hidden.text, token);
      this.#hidden.set(token, hidden);
    }
    return token;
  }
}
