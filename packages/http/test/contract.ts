import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";

/** One response a test saw. */
export interface SeenResponse {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly contentType: string;
  readonly body: unknown;
}

/** The document's errors against the OpenAPI 3.1 schema; empty when it is valid. */
export async function openApiErrors(document: object): Promise<unknown[]> {
  const result = await new Validator().validate(document as Parameters<Validator["validate"]>[0]);
  return result.valid ? [] : ([] as unknown[]).concat(result.errors ?? "invalid");
}

/** The document's path template a concrete path matches, e.g. `/pauses/{pauseId}/answer`. */
function templateOf(document: { paths: Record<string, unknown> }, path: string): string | undefined {
  const pathname = path.split("?")[0] ?? path;
  return Object.keys(document.paths).find((template) => {
    const pattern = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
    return new RegExp(`^${pattern}$`).test(pathname);
  });
}

/**
 * Checks each response against the document: its path, method and status are documented, and its body
 * fits the documented schema for its media type. Returns what does not fit.
 */
export function undocumented(
  document: {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
    >;
    components: object;
  },
  seen: readonly SeenResponse[],
): string[] {
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: "https://agboss.test/openapi.json", components: document.components });
  const problems: string[] = [];
  for (const response of seen) {
    const template = templateOf(document, response.path);
    const operation =
      template === undefined ? undefined : document.paths[template]?.[response.method.toLowerCase()];
    const documented = operation?.responses[String(response.status)];
    if (documented === undefined) {
      problems.push(`${response.method} ${response.path} ${response.status}: not documented`);
      continue;
    }
    const mediaType = response.contentType.split(";")[0]?.trim() ?? "";
    const schema = documented.content?.[mediaType]?.schema;
    if (schema === undefined) {
      problems.push(`${response.method} ${response.path} ${response.status}: no schema for ${mediaType}`);
      continue;
    }
    const rebased = JSON.parse(
      JSON.stringify(schema).replaceAll('"#/components/', '"https://agboss.test/openapi.json#/components/'),
    );
    const validate = ajv.compile(rebased);
    if (!validate(response.body)) {
      problems.push(
        `${response.method} ${response.path} ${response.status}: ${ajv.errorsText(validate.errors)}`,
      );
    }
  }
  return problems;
}
