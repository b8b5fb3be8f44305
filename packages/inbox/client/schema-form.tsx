import type { Field, Inputs } from "./validate.js";

/** The controls of a generated form, each labelled, with its error tied to it for screen readers. */
export function SchemaFields(props: {
  readonly idPrefix: string;
  readonly fields: readonly Field[];
  readonly inputs: Inputs;
  readonly errors: Readonly<Record<string, string>>;
  readonly onInput: (name: string, text: string) => void;
  /** A placeholder for a sensitive field whose value the page does not know. */
  readonly maskedHint?: string;
}) {
  const { idPrefix, fields, inputs, errors, onInput } = props;
  return (
    <>
      {fields.map((field) => {
        const id = `${idPrefix}-${field.name}`;
        const error = errors[field.name];
        const errorId = `${id}-error`;
        const text = inputs[field.name] ?? "";
        const common = {
          id,
          name: field.name,
          "aria-invalid": error !== undefined ? ("true" as const) : undefined,
          "aria-describedby": error !== undefined ? errorId : undefined,
        };
        const label = (
          <label for={id}>
            {field.name}
            {field.required ? "" : " (optional)"}
            {field.sensitive ? " (sensitive)" : ""}
          </label>
        );
        let control: preact.JSX.Element;
        if (field.control === "boolean") {
          return (
            <div class="field field-check" key={field.name}>
              <input
                {...common}
                type="checkbox"
                checked={text === "true"}
                onChange={(e) => onInput(field.name, String((e.currentTarget as HTMLInputElement).checked))}
              />
              {label}
              {error !== undefined && (
                <p id={errorId} class="error">
                  {error}
                </p>
              )}
            </div>
          );
        }
        if (field.control === "choice") {
          control = (
            <select
              {...common}
              required={field.required}
              value={text}
              onChange={(e) => onInput(field.name, (e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">{field.required ? "Choose…" : "(none)"}</option>
              {(field.schema.enum as unknown[]).map((o) => (
                <option value={String(o)} key={String(o)}>
                  {String(o)}
                </option>
              ))}
            </select>
          );
        } else if (field.control === "json") {
          control = (
            <textarea
              {...common}
              rows={3}
              value={text}
              onInput={(e) => onInput(field.name, (e.currentTarget as HTMLTextAreaElement).value)}
            />
          );
        } else {
          control = (
            <input
              {...common}
              type="text"
              inputMode={field.control === "number" ? "decimal" : undefined}
              required={field.required && !field.sensitive}
              autoComplete="off"
              placeholder={field.sensitive ? (props.maskedHint ?? "") : undefined}
              value={text}
              onInput={(e) => onInput(field.name, (e.currentTarget as HTMLInputElement).value)}
            />
          );
        }
        return (
          <div class="field" key={field.name}>
            {label}
            {control}
            {error !== undefined && (
              <p id={errorId} class="error">
                {error}
              </p>
            )}
          </div>
        );
      })}
    </>
  );
}
