import type { InputProperty, InputSchema } from "@codemux/core";
import { CODE_META_TOOLS, VERSION } from "@codemux/server";
import type { Gateway } from "./context";

type Json = Record<string, unknown>;

function metaTool(name: string): { description: string; inputSchema: InputSchema } {
  const tool = CODE_META_TOOLS.find((t) => t.definition.name === name);
  if (!tool) throw new Error(`The code surface has no meta-tool "${name}".`);
  return { description: tool.definition.description ?? "", inputSchema: tool.definition.inputSchema };
}

/**
 * REST's own words for each parameter: the meta-tools' descriptions are cut to what a model needs
 * in the upfront MCP list (most have none), and a REST caller reads them without the tool's context.
 */
const REST_DESCRIPTIONS: Record<string, Record<string, string>> = {
  search_tools: {
    limit: "Most tools to return.",
    server: "Only tools of this server.",
    detail: "How much of each tool: name (and signature), summary, or full (with its input schema).",
  },
  read_result: {
    op: "stat (size and lines), head, tail, slice (from..to), grep (pattern), or read (bytes from fromByte).",
    lines: "Lines for head and tail.",
    from: "First line of a slice (1-based).",
    to: "Last line of a slice (inclusive).",
    pattern: "Regular expression for grep.",
    context: "Lines shown around each grep match.",
    fromByte: "Byte offset for op=read; each answer gives the offset to go on from.",
    maxBytes: "Most bytes one op=read answers.",
  },
  execute_code: {
    code: 'TypeScript; import tools as functions (import { echo } from "mcp/servers/m/echo") and export default the answer.',
    timeoutMs: "Time limit of the run, in ms.",
    background: "Start the run as a background job and answer with its id at once.",
  },
};

/** Query parameters from a meta-tool's input schema (its properties, minus those the path carries). */
function queryParameters(tool: string, schema: InputSchema, options: { omit?: string[] } = {}): Json[] {
  return Object.entries(schema.properties)
    .filter(([name]) => !options.omit?.includes(name))
    .map(([name, property]) => ({
      name,
      in: "query",
      required: false,
      ...describedAs(tool, name, property),
      schema: jsonSchema(property),
    }));
}

/** A meta-tool's input schema as a REST body schema, each property described. */
function bodySchema(tool: string, schema: InputSchema): Json {
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([name, property]) => [name, { ...describedAs(tool, name, property), ...jsonSchema(property) }]),
  );
  return { ...(schema as unknown as Json), properties };
}

function describedAs(tool: string, name: string, property: InputProperty): { description?: string } {
  const description = REST_DESCRIPTIONS[tool]?.[name] ?? property.description;
  return description ? { description } : {};
}

/** The property as JSON Schema: codemux's own listing marker (`unlisted`) is no keyword of it. */
function jsonSchema(property: InputProperty): Json {
  const { description: _description, unlisted: _unlisted, ...rest } = property as InputProperty & { unlisted?: boolean };
  return rest as Json;
}

const ERROR = { $ref: "#/components/responses/Error" };

/**
 * The OpenAPI 3.1 document of the REST gateway, generated from the same input schemas the MCP
 * meta-tools declare (search_tools, execute_code, read_result), so both surfaces describe one contract.
 */
export function openApiDocument(gateway: Gateway): Json {
  const auth = gateway.options.tokens.length > 0;
  return {
    openapi: "3.1.0",
    info: {
      title: "codemux REST gateway",
      version: VERSION,
      description: "Search, describe and call the tools of every MCP server behind codemux, run TypeScript that chains them, and page through large results.",
    },
    ...(auth ? { security: [{ bearer: [] }, { apiKeyHeader: [] }, ...(gateway.options.allowQueryToken ? [{ apiKeyQuery: [] }] : [])] } : {}),
    paths: { ...toolPaths(), ...execPath(), ...resultPath(), ...openApiPath() },
    components: components(),
  };
}

/** Searching, describing and calling tools. */
function toolPaths(): Json {
  const search = metaTool("search_tools");
  return {
    "/v1/tools": {
      get: {
        operationId: "searchTools",
        summary: "Search tools (with q), or list them compactly (name and signature) without q.",
        description: search.description,
        parameters: [
          {
            name: "q",
            in: "query",
            required: false,
            description: "What you want to do; without it, a listing.",
            schema: { type: "string", maxLength: search.inputSchema.properties.query?.maxLength },
          },
          ...queryParameters("search_tools", search.inputSchema, { omit: ["query"] }),
          {
            name: "offset",
            in: "query",
            required: false,
            description: "Listing only (without q): tools to skip; the answer's next link carries it.",
            schema: { type: "integer", minimum: 0 },
          },
        ],
        responses: {
          200: { description: "Tools", content: { "application/json": { schema: { $ref: "#/components/schemas/ToolList" } } } },
          400: ERROR,
          503: ERROR,
        },
      },
    },
    "/v1/tools/{name}": {
      get: {
        operationId: "describeTool",
        summary: "One tool: its input schema and its TypeScript module (format=ts for the module alone).",
        parameters: [
          nameParameter(),
          {
            name: "format",
            in: "query",
            required: false,
            description: "json (default): the tool and its TypeScript module; ts: the module alone, as text.",
            schema: { type: "string", enum: ["json", "ts"] },
          },
        ],
        responses: {
          200: { description: "The tool", content: { "application/json": { schema: { type: "object" } }, "text/plain": { schema: { type: "string" } } } },
          404: ERROR,
        },
      },
    },
    "/v1/tools/{name}/call": {
      post: {
        operationId: "callTool",
        summary: "Call one tool; the body is its arguments object. 422 when the tool reports an error.",
        parameters: [
          nameParameter(),
          { name: "raw", in: "query", required: false, description: "Present (any value): also return the MCP result.", schema: { type: "string" } },
        ],
        requestBody: { required: false, content: { "application/json": { schema: { type: "object", additionalProperties: true } } } },
        responses: {
          200: { description: "The value (or a spilled handle)", content: { "application/json": { schema: { $ref: "#/components/schemas/CallAnswer" } } } },
          400: ERROR,
          404: ERROR,
          422: ERROR,
          503: ERROR,
          504: ERROR,
        },
      },
    },
  };
}

/** Running a snippet. */
function execPath(): Json {
  const exec = metaTool("execute_code");
  return {
    "/v1/exec": {
      post: {
        operationId: "executeCode",
        summary: "Run a TypeScript snippet that imports tools as typed functions.",
        description: exec.description,
        requestBody: { required: true, content: { "application/json": { schema: bodySchema("execute_code", exec.inputSchema) } } },
        responses: {
          200: { description: "result, stdout, stderr, durationMs, toolCalls", content: { "application/json": { schema: { type: "object" } } } },
          400: ERROR,
          422: ERROR,
          429: ERROR,
          504: ERROR,
        },
      },
    },
  };
}

/** Paging through a kept result. */
function resultPath(): Json {
  const read = metaTool("read_result");
  return {
    "/v1/results/{handle}": {
      get: {
        operationId: "readResult",
        summary: "Page through a result kept because it was too large (stat, head, tail, slice, grep, read).",
        description: read.description,
        parameters: [
          {
            name: "handle",
            in: "path",
            required: true,
            description: "The handle a spilled answer gave (res_ and 12 hex digits).",
            schema: { type: "string", pattern: "^res_[0-9a-f]{12}$" },
          },
          ...queryParameters("read_result", read.inputSchema, { omit: ["handle"] }),
        ],
        responses: { 200: { description: "The page", content: { "application/json": { schema: { type: "object" } } } }, 400: ERROR, 404: ERROR },
      },
    },
  };
}

/** This document's own path. */
function openApiPath(): Json {
  return {
    "/v1/openapi.json": {
      get: {
        operationId: "openapi",
        summary: "This document.",
        responses: { 200: { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } } },
      },
    },
  };
}

/** The security schemes, schemas and responses the paths refer to. */
function components(): Json {
  return {
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
          tools: {
            type: "array",
            items: {
              type: "object",
              properties: { name: { type: "string" }, signature: { type: "string" }, module: { type: "string" }, description: { type: "string" } },
              required: ["name"],
            },
          },
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
  };
}

function nameParameter(): Json {
  return { name: "name", in: "path", required: true, description: "The tool's qualified name, server__tool.", schema: { type: "string", maxLength: 200 } };
}
