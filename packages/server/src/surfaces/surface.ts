import type { MetaTool, Surface } from "@codemux/core";
import type { AnswerHints } from "../render/hints";
import type { CodemuxServices } from "../services";

/** What a surface is made from: codemux's services (it adds its own hints) and the meta-tools added to mode `code`. */
export interface SurfaceContext {
  services: Omit<CodemuxServices, "hints">;
  /** Meta-tools added by the host (jobs, agent), after the built-in ones. */
  metaTools: readonly MetaTool<never, CodemuxServices>[];
  /** Hints in another front end's words than the mode's own (the CLI runs mode code's meta-tools). */
  hints?: AnswerHints;
}

/** Makes a mode's surface (see `Surface` in @codemux/core); a new mode is a new factory, registered on the core. */
export type SurfaceFactory = (context: SurfaceContext) => Surface;
