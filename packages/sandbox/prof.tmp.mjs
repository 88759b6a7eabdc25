import { createQuickJSRuntime } from "./src/quickjs/quickjs-runtime.ts";
