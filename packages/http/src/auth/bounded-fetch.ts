/** Metadata and key sets larger than this are refused: an authorization server's answer is small. */
const MAX_BYTES = 256 * 1024;

/**
 * GETs a URL of the authorization server with a time bound on the whole answer and a size bound on
 * its body, read as it arrives; answers a Response holding the body read (for jose's `customFetch`).
 */
export async function boundedFetch(url: string, options: { timeoutMs: number; signal?: AbortSignal; headers?: Record<string, string> }): Promise<Response> {
  const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]) : AbortSignal.timeout(options.timeoutMs);
  const response = await fetch(url, { headers: { accept: "application/json", ...options.headers }, redirect: "error", signal });
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BYTES) {
      await reader.cancel();
      throw new Error(`its answer at ${url} is larger than ${MAX_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return new Response(Buffer.concat(chunks), { status: response.status, headers: response.headers });
}
