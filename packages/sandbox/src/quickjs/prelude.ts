import { HOST_CALL_GLOBAL, REMOVED_GLOBALS } from "../globals.js";

import { MAX_CALL_NAME_LENGTH } from "../defaults.js";

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
 * The prelude's console and timers, compiled on first use from the guest; each factory gets the
 * host functions and the built-ins the prelude captured before any guest code ran.
 */
export const CONSOLE = String.raw`(function (write, loadLib, stringify) {
  "use strict";
  let format;
  const room = { stdout: Infinity, stderr: Infinity };
  const writer = (stream) => (...args) => {
    if (room[stream] <= 0) return;
    format ??= loadLib("format");
    let text = format(args) + "\n";
    // A character is at least one byte, so this cut never hides an overflow from the host.
    if (text.length > room[stream]) text = text.slice(0, room[stream] + 1);
    room[stream] = write(stream === "stderr", stringify(text));
  };
  const log = writer("stdout");
  const warn = writer("stderr");
  return { console: { log, info: log, debug: log, trace: log, warn, error: warn } };
})`;

export const TIMERS = String.raw`(function (setTimer, clearTimer, fail, apply, then, resolved, NewTypeError) {
  "use strict";
  const needFunction = (what, fn) => { if (typeof fn !== "function") throw new NewTypeError(what + " needs a function"); };
  const clear = (id) => { if (typeof id === "number") clearTimer(id); };
  // Passed through a call, the functions keep the empty names they had as arguments of define().
  const unnamed = (fn) => fn;
  return {
    setTimeout: unnamed((fn, ms, ...args) => {
      needFunction("setTimeout", fn);
      return setTimer(() => fn(...args), Math.max(0, Number(ms) || 0), false);
    }),
    setInterval: unnamed((fn, ms, ...args) => {
      needFunction("setInterval", fn);
      return setTimer(() => fn(...args), Math.max(1, Number(ms) || 0), true);
    }),
    clearTimeout: clear,
    clearInterval: clear,
    queueMicrotask: unnamed((fn) => {
      needFunction("queueMicrotask", fn);
      // An exception in a microtask ends the run, as an uncaught one does in Node.
      apply(then, resolved, [() => { try { fn(); } catch (error) { fail(error); } }]);
    }),
  };
})`;

/** Results of the serializer that are not JSON text: the value broke a limit. */
export const SERIALIZE_TOO_LARGE = 1;
export const SERIALIZE_TOO_DEEP = 2;

/**
 * Guest code run before the bundle. It receives the host functions as arguments, so none of
 * them is ever reachable from the guest's global object, installs `console`, the timers,
 * `__host_call` and the lazily compiled standard globals, removes the built-ins the engine does
 * not bound, and returns the result serializer and the deliverer of call answers to the host. Every built-in it relies on later is
 * captured here, before the guest can replace it. Strings go to the host as JSON, because the
 * engine hands strings out as C strings, which end at the first NUL.
 */
export const PRELUDE = String.raw`(function (write, loadLib, call, setTimer, clearTimer, fail) {
  "use strict";
  const g = globalThis;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const apply = Reflect.apply;
  const keys = Object.keys;
  const isArray = Array.isArray;
  const join = Array.prototype.join;
  const then = Promise.prototype.then;
  const resolved = Promise.resolve();
  const finite = Number.isFinite;
  const NewError = Error;
  const NewTypeError = TypeError;
  const defineProperty = Object.defineProperty;
  const define = (name, value) => defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });

  for (const name of ${JSON.stringify(REMOVED_GLOBALS)}) delete g[name];
  // Resizing or detaching a buffer under live views is where engines overrun memory; snippets need neither.
  for (const name of ["resize", "transfer", "transferToFixedLength"]) delete ArrayBuffer.prototype[name];

  // Console, timers and the standard globals are compiled on first use (compiling is most of an
  // engine's preparation), each from a factory given the built-ins captured above.
  const libs = {};
  const lazy = (lib, names, load) => {
    for (const name of names) {
      defineProperty(g, name, {
        configurable: true,
        enumerable: false,
        get() {
          const exported = (libs[lib] ??= load());
          for (const each of names) define(each, exported[each]);
          return exported[name];
        },
        set(value) { define(name, value); },
      });
    }
  };
  lazy("console", ["console"], () => loadLib("console")(write, loadLib, stringify));
  lazy("timers", ["setTimeout", "setInterval", "clearTimeout", "clearInterval", "queueMicrotask"], () => loadLib("timers")(setTimer, clearTimer, fail, apply, then, resolved, NewTypeError));

  // Calls wait in the guest's own table, not behind a host promise each, and leave together: the
  // calls made before the guest yields go to the host in one crossing (one line each: id, name
  // and arguments as JSON, tab-separated; JSON text never holds a raw tab or newline), and every
  // answer that arrived together comes back through deliver(), one crossing for all.
  const NewPromise = Promise;
  const waiting = new Map();
  const mapGet = Map.prototype.get, mapSet = Map.prototype.set, mapDelete = Map.prototype.delete;
  const push = Array.prototype.push;
  let callSeq = 0;
  let outbox = [];
  const flush = () => {
    const batch = apply(join, outbox, ["\n"]);
    outbox = [];
    call(batch);
  };
  define("${HOST_CALL_GLOBAL}", (name, args) => {
    // Taken now, while the caller's frames are on the stack: a failed call then points at the line that made it.
    const site = new NewError();
    return new NewPromise((resolve, reject) => {
      if (typeof name !== "string") throw new NewTypeError("${HOST_CALL_GLOBAL} needs a name string");
      if (name.length > ${MAX_CALL_NAME_LENGTH}) throw new NewTypeError("${HOST_CALL_GLOBAL}: the name is longer than ${MAX_CALL_NAME_LENGTH} characters");
      const argsJson = stringify(args);
      const id = ++callSeq;
      apply(mapSet, waiting, [id, { resolve, reject, site }]);
      if (outbox.length === 0) apply(then, resolved, [flush]);
      apply(push, outbox, [argsJson === undefined ? id + "\t" + stringify(name) : id + "\t" + stringify(name) + "\t" + argsJson]);
    });
  });
  // answers: JSON of [[id, 1, value] | [id, 2] (undefined) | [id, 0, message], ...].
  const deliver = (answers) => {
    const list = parse(answers);
    for (let i = 0; i < list.length; i++) {
      const answer = list[i];
      const entry = apply(mapGet, waiting, [answer[0]]);
      if (entry === undefined) continue;
      apply(mapDelete, waiting, [answer[0]]);
      if (answer[1] === 1) entry.resolve(answer[2]);
      else if (answer[1] === 2) entry.resolve(undefined);
      else {
        const error = new NewError(answer[2]);
        error.stack = entry.site.stack;
        entry.reject(error);
      }
    }
  };

  for (const [lib, names] of [["url", ["URL", "URLSearchParams"]], ["text", ["TextEncoder", "TextDecoder"]], ["base64", ["atob", "btoa"]], ["clone", ["structuredClone"]]]) {
    lazy(lib, names, () => loadLib(lib));
  }

  // The serializer is compiled on first use, with the built-ins captured above, so a guest that replaced them changes nothing.
  let serialize;
  const numberClass = Number, stringClass = String, booleanClass = Boolean, booleanValue = Boolean.prototype.valueOf;
  const serializer = () => (serialize ??= loadLib("serialize")(stringify, apply, keys, isArray, join, finite, NewTypeError, numberClass, stringClass, booleanClass, booleanValue));
  return [serializer, deliver];
})`;
