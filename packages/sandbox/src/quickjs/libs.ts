/**
 * Standard globals a snippet author expects, in plain JavaScript for the guest. Each is compiled
 * on first use only (parsing costs more than a trivial run) and works in one linear pass, so a
 * huge input costs the guest time in proportion, under its deadline. UTF-8 only; no network.
 */

const URL_LIB = String.raw`(function () {
  "use strict";
  const SPECIAL = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443", "ftp:": "21", "file:": "" };
  const HEX = "0123456789ABCDEF";
  const utf8 = (code) => {
    if (code < 0x80) return [code];
    if (code < 0x800) return [0xc0 | (code >> 6), 0x80 | (code & 63)];
    if (code < 0x10000) return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63)];
    return [0xf0 | (code >> 18), 0x80 | ((code >> 12) & 63), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63)];
  };
  // Percent-encodes what a URL part may not hold; "%" stays, so encoding twice changes nothing.
  const encode = (text, keep) => {
    let out = "";
    for (const ch of text) {
      const code = ch.codePointAt(0);
      if (code > 0x20 && code < 0x7f && !keep.includes(ch)) out += ch;
      else {
        const cp = code >= 0xd800 && code <= 0xdfff ? 0xfffd : code;
        for (const byte of utf8(cp)) out += "%" + HEX[byte >> 4] + HEX[byte & 15];
      }
    }
    return out;
  };
  const PATH_ENCODE = "\"#<>?" + "\u0060{}";
  const QUERY_ENCODE = "\"#<>";
  const FRAGMENT_ENCODE = "\"<>\u0060";
  const USER_ENCODE = "\"#<>?\u0060{}/:;=@[\\]^|";
  const FORM_KEEP = "*-._";
  const formEncode = (text) => {
    let out = "";
    for (const ch of String(text)) {
      const code = ch.codePointAt(0);
      if (ch === " ") out += "+";
      else if ((code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || FORM_KEEP.includes(ch)) out += ch;
      else {
        const cp = code >= 0xd800 && code <= 0xdfff ? 0xfffd : code;
        for (const byte of utf8(cp)) out += "%" + HEX[byte >> 4] + HEX[byte & 15];
      }
    }
    return out;
  };
  const isHex = (c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
  const percentDecode = (text) => {
    if (!text.includes("%")) return text;
    const bytes = [];
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 37 && isHex(text.charCodeAt(i + 1)) && isHex(text.charCodeAt(i + 2))) {
        bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
        i += 2;
      } else if (c < 0x80) bytes.push(c);
      else {
        const cp = text.codePointAt(i);
        for (const byte of utf8(cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp)) bytes.push(byte);
        if (cp > 0xffff) i++;
      }
    }
    return new TextDecoder().decode(new Uint8Array(bytes));
  };
  const formDecode = (text) => percentDecode(text.replace(/\+/g, " "));

  const normalizePath = (path, special) => {
    const segments = path.split("/");
    const out = [];
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i];
      const lower = seg.toLowerCase();
      const last = i === segments.length - 1;
      if (seg === ".." || lower === ".%2e" || lower === "%2e." || lower === "%2e%2e") {
        if (out.length > 1) out.pop();
        if (last) out.push("");
      } else if (seg === "." || lower === "%2e") {
        if (last) out.push("");
      } else out.push(seg);
    }
    let result = out.join("/");
    if (special && result === "") result = "/";
    return result;
  };

  const parseAuthority = (auth, special) => {
    let user = "", pass = "", hostport = auth;
    const at = auth.lastIndexOf("@");
    if (at >= 0) {
      const info = auth.slice(0, at);
      hostport = auth.slice(at + 1);
      const colon = info.indexOf(":");
      user = encode(colon >= 0 ? info.slice(0, colon) : info, USER_ENCODE);
      pass = colon >= 0 ? encode(info.slice(colon + 1), USER_ENCODE) : "";
    }
    let host = hostport, port = "";
    const close = hostport.lastIndexOf("]");
    const colon = hostport.lastIndexOf(":");
    if (colon > close) {
      host = hostport.slice(0, colon);
      port = hostport.slice(colon + 1);
      if (port !== "" && !/^[0-9]+$/.test(port)) throw new TypeError("Invalid URL: bad port");
      if (port !== "") {
        const n = Number(port);
        if (n > 65535) throw new TypeError("Invalid URL: port out of range");
        port = String(n);
      }
    }
    if (special) {
      host = percentDecode(host).toLowerCase();
      if (host === "" ) throw new TypeError("Invalid URL: empty host");
      if (/[\u0000-\u0020#%\/:<>?@[\\\]^|]/.test(host.replace(/^\[.*\]$/, ""))) throw new TypeError("Invalid URL: bad host");
    } else host = encode(host, "\"#<>?\u0060{}");
    return { user, pass, host, port };
  };

  // Parses an absolute URL into parts; returns undefined when there is no scheme.
  const parseAbsolute = (input) => {
    const match = /^([a-zA-Z][a-zA-Z0-9+.\-]*):/.exec(input);
    if (!match) return undefined;
    const protocol = match[1].toLowerCase() + ":";
    const special = protocol in SPECIAL;
    let rest = input.slice(match[0].length);
    if (special) rest = rest.replace(/\\/g, "/");
    return parseRest(protocol, rest, special);
  };

  const parseRest = (protocol, rest, special) => {
    const parts = { protocol, user: "", pass: "", host: "", port: "", path: "", query: null, fragment: null, opaque: false };
    const hash = rest.indexOf("#");
    if (hash >= 0) { parts.fragment = encode(rest.slice(hash + 1), FRAGMENT_ENCODE); rest = rest.slice(0, hash); }
    const q = rest.indexOf("?");
    if (q >= 0) { parts.query = encode(rest.slice(q + 1), QUERY_ENCODE + (special ? "'" : "")); rest = rest.slice(0, q); }
    if (special || rest.startsWith("//")) {
      if (protocol === "file:") rest = rest.startsWith("//") ? rest : "//" + (rest.startsWith("/") ? "" : "/") + rest;
      else if (special) rest = rest.replace(/^\/*/, "//");
      const body = rest.slice(2);
      const slash = body.indexOf("/");
      const authority = slash >= 0 ? body.slice(0, slash) : body;
      Object.assign(parts, protocol === "file:" && authority === "" ? {} : parseAuthority(authority, special));
      parts.path = normalizePath(encode(slash >= 0 ? body.slice(slash) : "", PATH_ENCODE), special);
      if (parts.port === SPECIAL[protocol]) parts.port = "";
    } else if (rest.startsWith("/")) {
      parts.path = normalizePath(encode(rest, PATH_ENCODE), false);
    } else {
      parts.opaque = true;
      parts.path = encode(rest, "");
    }
    return parts;
  };

  const resolve = (input, base) => {
    const special = base.protocol in SPECIAL;
    if (special) input = input.replace(/\\/g, "/");
    if (input.startsWith("//")) return parseRest(base.protocol, input, special);
    if (base.opaque) {
      if (input.startsWith("#")) return Object.assign({}, base, { fragment: encode(input.slice(1), FRAGMENT_ENCODE) });
      throw new TypeError("Invalid URL");
    }
    const parts = Object.assign({}, base, { query: base.query, fragment: null });
    let rest = input;
    const hash = rest.indexOf("#");
    if (hash >= 0) { parts.fragment = encode(rest.slice(hash + 1), FRAGMENT_ENCODE); rest = rest.slice(0, hash); }
    const q = rest.indexOf("?");
    if (q >= 0) { parts.query = encode(rest.slice(q + 1), QUERY_ENCODE + (special ? "'" : "")); rest = rest.slice(0, q); }
    else if (rest !== "") parts.query = null;
    if (rest === "") return parts;
    if (rest.startsWith("/")) parts.path = normalizePath(encode(rest, PATH_ENCODE), special);
    else {
      const dir = base.path.slice(0, base.path.lastIndexOf("/") + 1) || "/";
      parts.path = normalizePath(encode(dir + rest, PATH_ENCODE), special);
    }
    return parts;
  };

  const serialize = (p, withFragment) => {
    let out = p.protocol;
    if (p.host !== "" || p.protocol === "file:" || (!p.opaque && p.path.startsWith("//"))) {
      out += "//";
      if (p.user !== "" || p.pass !== "") out += p.user + (p.pass !== "" ? ":" + p.pass : "") + "@";
      out += p.host + (p.port !== "" ? ":" + p.port : "");
    }
    out += p.path;
    if (p.query !== null) out += "?" + p.query;
    if (withFragment && p.fragment !== null) out += "#" + p.fragment;
    return out;
  };

  const PARTS = new WeakMap();
  const PARAMS_OWNER = new WeakMap();

  class URLSearchParams {
    #list = [];
    constructor(init) {
      if (init instanceof URLSearchParams) this.#list = init.#list.map((pair) => [pair[0], pair[1]]);
      else if (init !== undefined && init !== null && typeof init === "object") {
        if (typeof init[Symbol.iterator] === "function") {
          for (const pair of init) {
            const entry = Array.from(pair);
            if (entry.length !== 2) throw new TypeError("URLSearchParams: each pair needs a name and a value");
            this.#list.push([String(entry[0]), String(entry[1])]);
          }
        } else for (const key of Object.keys(init)) this.#list.push([key, String(init[key])]);
      } else if (init !== undefined) this.#parse(String(init));
    }
    #parse(text) {
      if (text.startsWith("?")) text = text.slice(1);
      this.#list = [];
      for (const piece of text.split("&")) {
        if (piece === "") continue;
        const eq = piece.indexOf("=");
        this.#list.push(eq >= 0 ? [formDecode(piece.slice(0, eq)), formDecode(piece.slice(eq + 1))] : [formDecode(piece), ""]);
      }
    }
    #update() {
      const owner = PARAMS_OWNER.get(this);
      if (owner) {
        const text = this.toString();
        PARTS.get(owner).query = text === "" ? null : text;
      }
    }
    static _reset(params, text) { params.#parse(text ?? ""); }
    get size() { return this.#list.length; }
    append(name, value) { this.#list.push([String(name), String(value)]); this.#update(); }
    delete(name, value) {
      name = String(name);
      this.#list = this.#list.filter((pair) => !(pair[0] === name && (value === undefined || pair[1] === String(value))));
      this.#update();
    }
    get(name) { name = String(name); const pair = this.#list.find((p) => p[0] === name); return pair ? pair[1] : null; }
    getAll(name) { name = String(name); return this.#list.filter((p) => p[0] === name).map((p) => p[1]); }
    has(name, value) { name = String(name); return this.#list.some((p) => p[0] === name && (value === undefined || p[1] === String(value))); }
    set(name, value) {
      name = String(name);
      value = String(value);
      const index = this.#list.findIndex((p) => p[0] === name);
      if (index < 0) this.#list.push([name, value]);
      else {
        this.#list[index] = [name, value];
        this.#list = this.#list.filter((p, i) => i <= index || p[0] !== name);
      }
      this.#update();
    }
    sort() {
      this.#list = this.#list.map((p, i) => [p, i]).sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1])).map((x) => x[0]);
      this.#update();
    }
    forEach(callback, thisArg) { for (const [k, v] of this.#list) callback.call(thisArg, v, k, this); }
    *keys() { for (const pair of this.#list) yield pair[0]; }
    *values() { for (const pair of this.#list) yield pair[1]; }
    *entries() { for (const pair of this.#list) yield [pair[0], pair[1]]; }
    [Symbol.iterator]() { return this.entries(); }
    toString() { return this.#list.map((p) => formEncode(p[0]) + "=" + formEncode(p[1])).join("&"); }
    get [Symbol.toStringTag]() { return "URLSearchParams"; }
  }

  class URL {
    #params;
    constructor(input, base) {
      input = String(input);
      let from = 0, to = input.length;
      while (from < to && input.charCodeAt(from) <= 0x20) from++;
      while (to > from && input.charCodeAt(to - 1) <= 0x20) to--;
      input = input.slice(from, to).replace(/[\t\n\r]/g, "");
      let parts = parseAbsolute(input);
      if (!parts) {
        if (base === undefined) throw new TypeError("Invalid URL: " + JSON.stringify(input.slice(0, 200)) + " is relative and no base was given");
        parts = resolve(input, PARTS.get(base instanceof URL ? base : new URL(base)));
      }
      PARTS.set(this, parts);
      this.#params = new URLSearchParams(parts.query ?? "");
      PARAMS_OWNER.set(this.#params, this);
    }
    static canParse(input, base) { try { new URL(input, base); return true; } catch { return false; } }
    static parse(input, base) { try { return new URL(input, base); } catch { return null; } }
    #parts() { return PARTS.get(this); }
    #set(parts) { PARTS.set(this, parts); URLSearchParams._reset(this.#params, parts.query); }
    get href() { return serialize(this.#parts(), true); }
    set href(value) { this.#set(PARTS.get(new URL(value))); }
    get origin() {
      const p = this.#parts();
      return p.protocol in SPECIAL && p.protocol !== "file:" ? p.protocol + "//" + p.host + (p.port !== "" ? ":" + p.port : "") : "null";
    }
    get protocol() { return this.#parts().protocol; }
    set protocol(value) {
      const match = /^([a-zA-Z][a-zA-Z0-9+.\-]*)/.exec(String(value));
      if (!match) return;
      const protocol = match[1].toLowerCase() + ":";
      if ((protocol in SPECIAL) !== (this.#parts().protocol in SPECIAL)) return;
      const parts = this.#parts();
      parts.protocol = protocol;
      if (parts.port === SPECIAL[protocol]) parts.port = "";
    }
    get username() { return this.#parts().user; }
    set username(value) { this.#parts().user = encode(String(value), USER_ENCODE); }
    get password() { return this.#parts().pass; }
    set password(value) { this.#parts().pass = encode(String(value), USER_ENCODE); }
    get host() { const p = this.#parts(); return p.host + (p.port !== "" ? ":" + p.port : ""); }
    set host(value) {
      const p = this.#parts();
      if (p.opaque) return;
      const parsed = parseAuthority(String(value), p.protocol in SPECIAL);
      p.host = parsed.host;
      p.port = parsed.port === SPECIAL[p.protocol] ? "" : parsed.port;
    }
    get hostname() { return this.#parts().host; }
    set hostname(value) { const p = this.#parts(); if (!p.opaque) p.host = parseAuthority(String(value), p.protocol in SPECIAL).host; }
    get port() { return this.#parts().port; }
    set port(value) {
      const p = this.#parts();
      const text = String(value);
      if (text === "") { p.port = ""; return; }
      const digits = /^[0-9]+/.exec(text);
      if (!digits || Number(digits[0]) > 65535) return;
      p.port = String(Number(digits[0])) === SPECIAL[p.protocol] ? "" : String(Number(digits[0]));
    }
    get pathname() { return this.#parts().path; }
    set pathname(value) {
      const p = this.#parts();
      if (p.opaque) return;
      let path = String(value);
      if (p.protocol in SPECIAL) path = path.replace(/\\/g, "/");
      if (!path.startsWith("/")) path = "/" + path;
      p.path = normalizePath(encode(path, PATH_ENCODE), p.protocol in SPECIAL);
    }
    get search() { const q = this.#parts().query; return q === null || q === "" ? "" : "?" + q; }
    set search(value) {
      let text = String(value);
      if (text.startsWith("?")) text = text.slice(1);
      const p = this.#parts();
      p.query = text === "" ? null : encode(text, QUERY_ENCODE + (p.protocol in SPECIAL ? "'" : ""));
      URLSearchParams._reset(this.#params, p.query);
    }
    get searchParams() { return this.#params; }
    get hash() { const f = this.#parts().fragment; return f === null || f === "" ? "" : "#" + f; }
    set hash(value) {
      let text = String(value);
      if (text.startsWith("#")) text = text.slice(1);
      this.#parts().fragment = text === "" ? null : encode(text, FRAGMENT_ENCODE);
    }
    toString() { return this.href; }
    toJSON() { return this.href; }
    get [Symbol.toStringTag]() { return "URL"; }
  }
  return { URL, URLSearchParams };
})()`;

const TEXT_LIB = String.raw`(function () {
  "use strict";
  const LABELS = ["utf-8", "utf8", "unicode-1-1-utf-8"];
  const fromCodes = (codes, length) => {
    // Chunks keep String.fromCharCode within argument limits and the whole pass linear.
    const parts = [];
    for (let i = 0; i < length; i += 8192) parts.push(String.fromCharCode.apply(null, codes.subarray(i, Math.min(length, i + 8192))));
    return parts.join("");
  };
  const bytesOf = (input) => {
    if (input === undefined) return new Uint8Array(0);
    if (input instanceof ArrayBuffer) return new Uint8Array(input);
    if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    throw new TypeError("TextDecoder.decode needs an ArrayBuffer or a view of one");
  };
  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(input = "") {
      const text = String(input);
      const out = new Uint8Array(text.length * 3);
      const written = this.encodeInto(text, out).written;
      return out.slice(0, written);
    }
    encodeInto(input, dest) {
      const text = String(input);
      let read = 0, written = 0;
      for (let i = 0; i < text.length; i++) {
        let code = text.charCodeAt(i);
        let units = 1;
        if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
          const low = text.charCodeAt(i + 1);
          if (low >= 0xdc00 && low <= 0xdfff) { code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00); units = 2; }
          else code = 0xfffd;
        } else if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
        const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
        if (written + size > dest.length) break;
        if (size === 1) dest[written++] = code;
        else if (size === 2) { dest[written++] = 0xc0 | (code >> 6); dest[written++] = 0x80 | (code & 63); }
        else if (size === 3) { dest[written++] = 0xe0 | (code >> 12); dest[written++] = 0x80 | ((code >> 6) & 63); dest[written++] = 0x80 | (code & 63); }
        else { dest[written++] = 0xf0 | (code >> 18); dest[written++] = 0x80 | ((code >> 12) & 63); dest[written++] = 0x80 | ((code >> 6) & 63); dest[written++] = 0x80 | (code & 63); }
        read += units;
        i += units - 1;
      }
      return { read, written };
    }
    get [Symbol.toStringTag]() { return "TextEncoder"; }
  }
  class TextDecoder {
    #fatal;
    #ignoreBOM;
    constructor(label = "utf-8", options = {}) {
      if (!LABELS.includes(String(label).trim().toLowerCase())) throw new RangeError("TextDecoder: only utf-8 is available in the sandbox, not " + JSON.stringify(String(label).slice(0, 100)));
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() { return "utf-8"; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input) {
      const bytes = bytesOf(input);
      const codes = new Uint16Array(bytes.length + 1);
      let n = 0;
      let i = 0;
      if (!this.#ignoreBOM && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
      const bad = () => {
        if (this.#fatal) throw new TypeError("TextDecoder: the data is not valid utf-8");
        codes[n++] = 0xfffd;
      };
      while (i < bytes.length) {
        const b = bytes[i];
        if (b < 0x80) { codes[n++] = b; i++; continue; }
        let need, code, min;
        if (b >= 0xc2 && b <= 0xdf) { need = 1; code = b & 0x1f; min = 0x80; }
        else if (b >= 0xe0 && b <= 0xef) { need = 2; code = b & 0x0f; min = 0x800; }
        else if (b >= 0xf0 && b <= 0xf4) { need = 3; code = b & 0x07; min = 0x10000; }
        else { bad(); i++; continue; }
        let j = 1;
        for (; j <= need; j++) {
          const next = bytes[i + j];
          if (next === undefined || (next & 0xc0) !== 0x80) break;
          code = (code << 6) | (next & 0x3f);
        }
        if (j <= need || code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) { bad(); i += Math.max(1, j); continue; }
        i += need + 1;
        if (code >= 0x10000) { code -= 0x10000; codes[n++] = 0xd800 + (code >> 10); codes[n++] = 0xdc00 + (code & 0x3ff); }
        else codes[n++] = code;
      }
      return fromCodes(codes, n);
    }
    get [Symbol.toStringTag]() { return "TextDecoder"; }
  }
  return { TextEncoder, TextDecoder };
})()`;

const BASE64_LIB = String.raw`(function () {
  "use strict";
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const CODES = new Uint8Array(64);
  const VALUES = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) { CODES[i] = ALPHABET.charCodeAt(i); VALUES[CODES[i]] = i; }
  const invalid = (message) => { const error = new Error(message); error.name = "InvalidCharacterError"; return error; };
  // Typed arrays and chunks keep memory at one byte per character and the pass linear.
  const text = (codes) => {
    const parts = [];
    for (let i = 0; i < codes.length; i += 8192) parts.push(String.fromCharCode.apply(null, codes.subarray(i, i + 8192)));
    return parts.join("");
  };
  const btoa = (input) => {
    const data = String(input);
    const out = new Uint8Array(Math.ceil(data.length / 3) * 4);
    let o = 0;
    for (let i = 0; i < data.length; i += 3) {
      const a = data.charCodeAt(i), b = i + 1 < data.length ? data.charCodeAt(i + 1) : 0, c = i + 2 < data.length ? data.charCodeAt(i + 2) : 0;
      if (a > 255 || b > 255 || c > 255) throw invalid("btoa: the string has characters outside Latin-1; encode it to bytes first (TextEncoder)");
      const n = (a << 16) | (b << 8) | c;
      out[o++] = CODES[n >> 18];
      out[o++] = CODES[(n >> 12) & 63];
      out[o++] = i + 1 < data.length ? CODES[(n >> 6) & 63] : 61;
      out[o++] = i + 2 < data.length ? CODES[n & 63] : 61;
    }
    return text(out);
  };
  const atob = (input) => {
    const data = String(input);
    const digits = new Uint8Array(data.length);
    let length = 0;
    for (let i = 0; i < data.length; i++) {
      const code = data.charCodeAt(i);
      if (code === 9 || code === 10 || code === 12 || code === 13 || code === 32) continue;
      const value = code < 128 ? VALUES[code] : -1;
      if (value < 0 && code !== 61) throw invalid("atob: the string is not valid base64");
      digits[length++] = code;
    }
    if (length % 4 === 0 && digits[length - 1] === 61) { length--; if (digits[length - 1] === 61) length--; }
    if (length % 4 === 1) throw invalid("atob: the string is not valid base64");
    const out = new Uint8Array(Math.floor((length * 3) / 4));
    let o = 0, buffer = 0, bits = 0;
    for (let i = 0; i < length; i++) {
      const value = VALUES[digits[i]];
      if (value < 0) throw invalid("atob: the string is not valid base64");
      buffer = ((buffer << 6) | value) & 0xffffff;
      bits += 6;
      if (bits >= 8) { bits -= 8; out[o++] = (buffer >> bits) & 255; }
    }
    return text(out.subarray(0, o));
  };
  return { atob, btoa };
})()`;

const CLONE_LIB = String.raw`(function () {
  "use strict";
  const uncloneable = (what) => { const error = new Error(what + " could not be cloned."); error.name = "DataCloneError"; return error; };
  const TYPED = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array]
    .concat(typeof Float16Array === "function" ? [Float16Array] : []);
  const ERRORS = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  const structuredClone = (value) => {
    const seen = new Map();
    const clone = (v) => {
      if (typeof v === "function") throw uncloneable("A function");
      if (typeof v === "symbol") throw uncloneable("A symbol");
      if (typeof v !== "object" || v === null) return v;
      if (seen.has(v)) return seen.get(v);
      let out;
      if (Array.isArray(v)) {
        out = new Array(v.length);
        seen.set(v, out);
        for (const key of Object.keys(v)) out[key] = clone(v[key]);
        return out;
      }
      if (v instanceof Date) out = new Date(v.getTime());
      else if (v instanceof RegExp) out = new RegExp(v.source, v.flags);
      else if (v instanceof ArrayBuffer) out = v.slice(0);
      else if (v instanceof DataView) out = new DataView(clone(v.buffer), v.byteOffset, v.byteLength);
      else if (ArrayBuffer.isView(v)) {
        const Typed = TYPED.find((T) => v instanceof T);
        if (!Typed) throw uncloneable("This view");
        out = new Typed(clone(v.buffer), v.byteOffset, v.length);
      } else if (v instanceof Map) {
        out = new Map();
        seen.set(v, out);
        for (const [k, x] of v) out.set(clone(k), clone(x));
        return out;
      } else if (v instanceof Set) {
        out = new Set();
        seen.set(v, out);
        for (const x of v) out.add(clone(x));
        return out;
      } else if (v instanceof Error) {
        const Kind = ERRORS[v.name] || Error;
        out = new Kind(v.message);
        if (typeof v.stack === "string") out.stack = v.stack;
      } else if (v instanceof Number || v instanceof String || v instanceof Boolean) out = Object(v.valueOf());
      else if (v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet) throw uncloneable("A " + v.constructor.name);
      else {
        out = {};
        seen.set(v, out);
        for (const key of Object.keys(v)) out[key] = clone(v[key]);
        return out;
      }
      seen.set(v, out);
      return out;
    };
    return clone(value);
  };
  return { structuredClone };
})()`;

/**
 * JSON of a value, iteratively and with limits: stops as soon as the text passes maxLength
 * (returns SERIALIZE_TOO_LARGE = 1) or the nesting passes maxDepth (returns SERIALIZE_TOO_DEEP = 2),
 * so a small value that would expand to gigabytes costs only up to the limit. It receives the
 * built-ins it uses, captured by the prelude before the guest ran.
 */
const SERIALIZE_LIB = String.raw`(function (stringify, apply, keys, isArray, join, finite, NewTypeError, numberClass, stringClass, booleanClass, booleanValue) {
  "use strict";
  return (root, maxLength, maxDepth) => {
    // Pieces are joined into chunks as they come, so the pieces never outweigh the text.
    const chunks = [];
    let chunkCount = 0;
    let out = [];
    let count = 0;
    let length = 0;
    let over = false;
    const emit = (text) => {
      length += text.length;
      if (length > maxLength) over = true;
      else {
        out[count++] = text;
        if (count === 4096) {
          chunks[chunkCount++] = apply(join, out, [""]);
          out = [];
          count = 0;
        }
      }
    };
    const prepare = (key, value) => {
      if ((typeof value === "object" && value !== null) || typeof value === "bigint") {
        const toJSON = value.toJSON;
        if (typeof toJSON === "function") value = apply(toJSON, value, [key]);
      }
      if (value instanceof numberClass) value = +value;
      else if (value instanceof stringClass) value = "" + value;
      else if (value instanceof booleanClass) value = apply(booleanValue, value, []);
      switch (typeof value) {
        case "string": return stringify(value);
        case "number": return finite(value) ? "" + value : "null";
        case "boolean": return value ? "true" : "false";
        case "bigint": throw new NewTypeError("a BigInt has no JSON form");
        case "undefined": case "function": case "symbol": return undefined;
      }
      return value === null ? "null" : value;
    };
    const stack = [];
    let depth = 0;
    const open = (value) => {
      for (let i = 0; i < depth; i++) if (stack[i].value === value) throw new NewTypeError("it is circular");
      if (depth >= maxDepth) return false;
      const array = isArray(value);
      stack[depth++] = { value, array, keys: array ? undefined : keys(value), end: array ? value.length : 0, next: 0, wrote: false };
      emit(array ? "[" : "{");
      return true;
    };
    const first = prepare("", root);
    if (first === undefined || typeof first === "string") return first !== undefined && first.length > maxLength ? 1 : first;
    if (!open(first)) return 2;
    while (depth > 0 && !over) {
      const frame = stack[depth - 1];
      if (frame.array) {
        if (frame.next >= frame.end) { emit("]"); stack[--depth] = undefined; continue; }
        const index = frame.next++;
        if (index > 0) emit(",");
        const value = prepare("" + index, frame.value[index]);
        if (value === undefined) emit("null");
        else if (typeof value === "string") emit(value);
        else if (!open(value)) return 2;
      } else {
        if (frame.next >= frame.keys.length) { emit("}"); stack[--depth] = undefined; continue; }
        const key = frame.keys[frame.next++];
        const value = prepare(key, frame.value[key]);
        if (value === undefined) continue;
        if (frame.wrote) emit(",");
        frame.wrote = true;
        emit(stringify(key));
        emit(":");
        if (typeof value === "string") emit(value);
        else if (!open(value)) return 2;
      }
    }
    if (over) return 1;
    chunks[chunkCount++] = apply(join, out, [""]);
    return apply(join, chunks, [""]);
  };
})`;

/** Sources by the name the prelude asks for. */
export const LIBS: Record<string, string> = { url: URL_LIB, text: TEXT_LIB, base64: BASE64_LIB, clone: CLONE_LIB, serialize: SERIALIZE_LIB };
