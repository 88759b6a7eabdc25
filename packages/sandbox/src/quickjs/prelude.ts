/**
 * Node-like formatting for console arguments. Compiled on the first console call only: parsing it
 * costs more than the rest of a trivial run.
 */
export const FORMAT = String.raw`(function () {
  "use strict";
  const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
  const quote = (s) => "'" + s.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n") + "'";
  const inspect = (value, depth, seen) => {
    switch (typeof value) {
      case "string": return depth === 0 ? value : quote(value);
      case "number": return Object.is(value, -0) ? "-0" : String(value);
      case "bigint": return String(value) + "n";
      case "symbol": return value.toString();
      case "function": return "[Function: " + (value.name || "(anonymous)") + "]";
      case "undefined": return "undefined";
      case "boolean": return String(value);
    }
    if (value === null) return "null";
    if (seen.includes(value)) return "[Circular]";
    if (value instanceof Error) return value.name + ": " + value.message;
    if (value instanceof Date) return isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
    if (value instanceof RegExp) return String(value);
    if (value instanceof Promise) return "Promise {}";
    const nested = seen.concat([value]);
    const item = (v) => inspect(v, depth + 1, nested);
    const list = (open, items, close) => items.length === 0 ? open + close : open + " " + items.join(", ") + " " + close;
    if (Array.isArray(value)) {
      if (depth > 2) return "[Array]";
      const items = value.slice(0, 100).map(item);
      if (value.length > 100) items.push("... " + (value.length - 100) + " more items");
      return list("[", items, "]");
    }
    if (value instanceof Map) {
      if (depth > 2) return "[Map]";
      return list("Map(" + value.size + ") {", Array.from(value, ([k, v]) => item(k) + " => " + item(v)), "}");
    }
    if (value instanceof Set) {
      if (depth > 2) return "[Set]";
      return list("Set(" + value.size + ") {", Array.from(value, item), "}");
    }
    const ctor = value.constructor && value.constructor !== Object ? value.constructor.name + " " : "";
    if (depth > 2) return "[" + (ctor.trim() || "Object") + "]";
    const items = Object.keys(value).map((k) => (IDENTIFIER.test(k) ? k : quote(k)) + ": " + item(value[k]));
    return ctor + list("{", items, "}");
  };
  return (args) => args.map((a) => inspect(a, 0, [])).join(" ");
})()`;

/**
 * Guest code run before the bundle. It receives the host functions as arguments, so none of
 * them is ever reachable from the guest's global object, and installs `console`, the timers
 * and `__host_call` on top of them.
 */
export const PRELUDE = String.raw`(function (write, loadFormat, call, setTimer, clearTimer) {
  "use strict";
  const g = globalThis;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  let format;
  const room = { stdout: Infinity, stderr: Infinity };
  const writer = (stream) => (...args) => {
    if (room[stream] <= 0) return;
    format ??= loadFormat();
    let text = format(args) + "\n";
    // A character is at least one byte, so this cut never hides an overflow from the host.
    if (text.length > room[stream]) text = text.slice(0, room[stream] + 1);
    room[stream] = write(stream, text);
  };
  const log = writer("stdout");
  const warn = writer("stderr");
  const define = (name, value) => Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
  define("console", { log, info: log, debug: log, trace: log, warn, error: warn });
  define("setTimeout", (fn, ms, ...args) => {
    if (typeof fn !== "function") throw new TypeError("setTimeout needs a function");
    return setTimer(() => fn(...args), Math.max(0, Number(ms) || 0));
  });
  define("clearTimeout", (id) => { if (typeof id === "number") clearTimer(id); });
  define("__host_call", async (name, args) => {
    if (typeof name !== "string") throw new TypeError("__host_call needs a name string");
    const answer = await call(name, stringify(args));
    return answer === undefined ? undefined : parse(answer);
  });
})`;
