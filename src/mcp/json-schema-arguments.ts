import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { type ParsedArguments, parseArgumentsObject } from '../agent/tool.js';

export type ArgumentParser = (raw: string) => ParsedArguments;

export type CompiledSchema =
  | { ok: true; parse: ArgumentParser; jsonSchema: Record<string, unknown> }
  | { ok: false; error: string };

// One validator per dialect: servers built on zod-to-json-schema say draft-07, the MCP default is 2020-12.
const draft07 = withFormats(new Ajv({ strict: false, allErrors: true, logger: false }));
const draft2020 = withFormats(new Ajv2020({ strict: false, allErrors: true, logger: false }));

function withFormats<T extends Ajv | Ajv2020>(ajv: T): T {
  addFormats.default(ajv);
  return ajv;
}

/**
 * Compiles a tool's JSON Schema (as an MCP server sends it) into a parser of model-sent arguments, so a call
 * is checked here before it reaches the server. The schema without `$schema` is what the model is shown.
 */
export function compileArgumentSchema(schema: Record<string, unknown>): CompiledSchema {
  const { $schema, ...jsonSchema } = schema;
  const ajv = typeof $schema === 'string' && /draft-0[467]/.test($schema) ? draft07 : draft2020;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(jsonSchema);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : 'the schema does not compile' };
  }
  const parse: ArgumentParser = (raw) => {
    const json = parseArgumentsObject(raw);
    if (!json.ok) return json;
    if (validate(json.args)) return json;
    const details = (validate.errors ?? []).map(describeError);
    return { ok: false, error: `The arguments are invalid: ${details.join('; ')}.` };
  };
  return { ok: true, parse, jsonSchema };
}

function describeError(error: ErrorObject): string {
  const path = error.instancePath.replace(/^\//, '').replaceAll('/', '.') || '(root)';
  const extra =
    error.keyword === 'additionalProperties' ? ` (${String(error.params.additionalProperty)})` : '';
  return `${path}: ${error.message ?? 'is invalid'}${extra}`;
}
