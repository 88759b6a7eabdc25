import { CODE_META_TOOLS, VERSION, type InputProperty, type InputSchema } from "@codemux/server";
import type { Gateway } from "./context";

type Json = Record<string, unknown>;

function metaTool(name: string): { description: string; inputSchema: InputSchema } {
  const tool = CODE_META_TOOLS.find((t) => t.definition.name === name);
  if (!tool) throw new Error(`The code surface has no meta-tool "${name}".`);
  return { description: tool.definition.description ?? "", inputSchema: tool.definition.inputSchema };
}

/** Query parameters from a meta-tool's input schema (its properties, minus those the path carries). */
function queryParameters(schema: InputSchema, options: { rename?: Record<string, string>; omit?: string[] } = {}): Json[] {
  return Object.entries(schema.properties)
    .filter(([name]) => !options.omit?.includes(name))
    .map(([name, property]) => ({
      name: options.rename?.[name] ?? name,
      in: "query",
      required: false,
      ...(property.description ? { description: property.description } : {}),
      schema: jsonSchema(property),
    }));
}

function jsonSchema(property: InputProperty): Json {
  const { description: _description, ...rest } = property;
  return rest as Json;
}

const ERROR = { $ref: "#/components/responses/Error" };

/**
 * The OpenAPI 3.1 document of the REST gateway, generated from the same input schemas the MCP
 * meta-tools declare (search_tools, execute_code, read_result), so both surfaces describe one contract.
 */
export function openApiDocument(gateway: Gateway): Json {
  const search = metaTool("search_tools");
  const exec = metaTool("execute_code");
  const read = metaTool("read_result");
  const auth = gateway.options.tokens.length > 0;
  return {
    openapi: "3.1.0",
    info: { title: "codemux REST gateway", version: VERSION, description: "Search, describe and call the tools of every MCP server behind codemux, run TypeScript that chains them, and page through large results." },
    ...(auth ? { security: [{ bearer: [] }, { apiKeyHeader: [] }, ...(gateway.options.allowQueryToken ? [{ apiKeyQuery: [] }] : [])] } : {}),
    paths: {
      "/v1/tools": {
        get: {
          operationId: "searchTools",
          summary: "Search tools (with q), or list them compactly (name and signature) without q.",
          description: search.description,
          parameters: [{ name: "q", in: "query", required: false, description: "What you want to do; without it, a listing.", schema: { type: "string", maxLength: search.inputSchema.properties.query?.maxLength } }, ...queryParameters(search.inputSchema, { omit: ["query"] }), { name: "offset", in: "query", required: false, schema: { type: "integer", minimum: 0 } }],
          responses: { 200: { description: "Tools", content: { "application/json": { schema: { $ref: "#/components/schemas/ToolList" } } } }, 400: ERROR, 503: ERROR },
        },
      },
      "/v1/tools/{name}": {
        get: {
          operationId: "describeTool",
          summary: "One tool: its input schema and its TypeScript module (format=ts for the module alone).",
          parameters: [nameParameter(), { name: "format", in: "query", required: false, schema: { type: "string", enum: ["json", "ts"] } }],
          responses: { 200: { description: "The tool", content: { "application/json": { schema: { type: "object" } }, "text/plain": { schema: { type: "string" } } } }, 404: ERROR },
        },
      },
      "/v1/tools/{name}/call": {
        post: {
          operationId: "callTool",
          summary: "Call one tool; the body is its arguments object. 422 when the tool reports an error.",
          parameters: [nameParameter(), { name: "raw", in: "query", required: false, description: "Also return the MCP result.", schema: { type: "string" } }],
          requestBody: { required: false, content: { "application/json": { schema: { type: "object", additionalProperties: true } } } },
          responses: { 200: { description: "The value (or a spilled handle)", content: { "application/json": { schema: { $ref: "#/components/schemas/CallAnswer" } } } }, 400: ERROR, 404: ERROR, 422: ERROR, 503: ERROR, 504: ERROR },
        },
      },
      "/v1/exec": {
        post: {
          operationId: "executeCode",
          summary: "Run a TypeScript snippet that imports tools as typed functions.",
          description: exec.description,
          requestBody: { required: true, content: { "application/json": { schema: { ...(exec.inputSchema as unknown as Json) } } } },
          responses: { 200: { description: "result, stdout, stderr, durationMs, toolCalls", content: { "application/json": { schema: { type: "object" } } } }, 400: ERROR, 422: ERROR, 429: ERROR, 504: ERROR },
        },
      },
      "/v1/results/{handle}": {
        get: {
          operationId: "readResult",
          summary: "Page through a result kept because it was too large (stat, head, tail, slice, grep, read).",
          description: read.description,
          parameters: [{ name: "handle", in: "path", required: true, schema: { type: "string", pattern: "^res_[0-9a-f]{12}$" } }, ...queryParameters(read.inputSchema, { omit: ["handle"] })],
          responses: { 200: { description: "The page", content: { "application/json": { schema: { type: "object" } } } }, 400: ERROR, 404: ERROR },
        },
      },
      "/v1/openapi.json": { get: { operationId: "openapi", summary: "This document.", responses: { 200: { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } } } } },
    },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key" },
        apiKeyQuery: { type: "apiKey", in: "query", name: "apikey" },
      },
      schemas: {
        Error: {
          type: "object",
          required: ["error"],
          properties: { error: { type: "object", required: ["code", "message"], properties: { code: { type: "string" }, message: { type: "string" } } } },
        },
        ToolList: {
          type: "object",
          properties: {
            tools: { type: "array", items: { type: "object", properties: { name: { type: "string" }, signature: { type: "string" }, module: { type: "string" }, description: { type: "string" } }, required: ["name"] } },
            count: { type: "integer" },
            total: { type: "integer" },
          },
        },
        CallAnswer: {
          type: "object",
          properties: {
            tool: { type: "string" },
            value: {},
            spilled: { type: "object", properties: { handle: { type: "string" }, text: { type: "string" } } },
          },
        },
      },
      responses: { Error: { description: "An error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } } },
    },
  };
}

function nameParameter(): Json {
  return { name: "name", in: "path", required: true, description: "server__tool", schema: { type: "string", maxLength: 200 } };
}
