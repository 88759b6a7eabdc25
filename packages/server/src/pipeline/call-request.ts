import type { CallOrigin, CallRequest, RequestContext } from "@codemux/core";

/**
 * The one builder of a call request from a front end's request (call_tool, passthrough, dispatch,
 * REST, the CLI, a background job). Field by field, with no spread object: it is on every call's path.
 */
export function callRequest(target: { name: string; args: unknown; origin?: CallOrigin }, request: RequestContext & { job?: string | undefined }): CallRequest {
  const call: CallRequest = { name: target.name, arguments: target.args, origin: target.origin ?? request.origin, session: request.session };
  if (request.signal) call.signal = request.signal;
  if (request.progress) call.progress = request.progress;
  if (request.requestId !== undefined) call.requestId = request.requestId;
  if (request.job !== undefined) call.job = request.job;
  if (request.resume !== undefined) call.resume = request.resume;
  return call;
}
