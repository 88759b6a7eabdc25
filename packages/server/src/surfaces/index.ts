import { codeSurface } from "./code";
import { dispatchSurface } from "./dispatch";
import { passthroughSurface } from "./passthrough";
import type { SurfaceFactory } from "./surface";

/** The modes codemux offers by name (`--mode NAME`); a new mode is one line here and its own file beside this one. */
export const BUILT_IN_SURFACES: Readonly<Record<string, SurfaceFactory>> = {
  code: codeSurface,
  passthrough: passthroughSurface,
  dispatch: dispatchSurface,
};
