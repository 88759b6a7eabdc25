import type { CallOrigin, SessionInfo } from "@codemux/core";

/** The module snippets import to reach the servers' resources. */
export const RESOURCES_SPECIFIER = "mcp/resources";
/** Host calls the module makes; they never name a downstream tool (tool names are `server__tool`). */
const LIST = "codemux/resources/list";
const READ = "codemux/resources/read";

/** The TypeScript of `mcp/resources`, over the sandbox's host-call global. */
export function resourcesModule(hostCallGlobal: string): string {
  return `/** Resources of every connected server, as resources/list and resources/read give them to clients. */
declare function ${hostCallGlobal}(name: string, args: unknown): Promise<unknown>;

export interface ResourceInfo { uri: string; name: string; description?: string; mimeType?: string }
export interface ResourceContents { uri: string; mimeType?: string; text?: string; blob?: string }

/** Every server's resources (a URI two servers share is shown as codemux://<server>/<uri>). */
export async function listResources(): Promise<ResourceInfo[]> {
  return (await ${hostCallGlobal}(${JSON.stringify(LIST)}, {})) as ResourceInfo[];
}

/** One resource's contents, from the server that has it (also URIs of a server's templates). */
export async function readResource(uri: string): Promise<ResourceContents[]> {
  return (await ${hostCallGlobal}(${JSON.stringify(READ)}, { uri })) as ResourceContents[];
}
`;
}

/** The servers' resources, as snippets reach them: listed and read for a session, through the call pipeline. */
export interface ResourceReader {
  listResources(session: SessionInfo): Promise<Array<{ uri: string; name: string; description?: string; mimeType?: string }>>;
  readResource(uri: string, caller: { session: SessionInfo; origin: CallOrigin; signal?: AbortSignal }): Promise<{ contents: unknown[] }>;
}

/** Answers the module's host calls. */
export async function resourceCall(
  reader: ResourceReader,
  call: { name: string; args: unknown; session: SessionInfo; signal?: AbortSignal },
): Promise<unknown> {
  const { name, args, session, signal } = call;
  if (name === LIST)
    return (await reader.listResources(session)).map(({ uri, name: title, description, mimeType }) => ({
      uri,
      name: title,
      ...(description ? { description } : {}),
      ...(mimeType ? { mimeType } : {}),
    }));
  const uri = typeof args === "object" && args !== null ? (args as { uri?: unknown }).uri : undefined;
  if (typeof uri !== "string") throw new TypeError('readResource needs a uri string, like readResource("file:///notes.txt").');
  return (await reader.readResource(uri, { session, origin: "execute_code", ...(signal ? { signal } : {}) })).contents;
}

/** True for the module's own host calls. */
export function isResourceCall(name: string): boolean {
  return name === LIST || name === READ;
}
