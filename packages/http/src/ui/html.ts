/** Markup made by `html`: its text is already escaped, so it is inserted as it is. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** A value `html` may insert: text (escaped), markup made by `html`, a list of either, or nothing. */
export type HtmlValue = string | number | SafeHtml | undefined | null | false | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

/** Text as HTML text or a quoted attribute value: every character that could end either is escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] as string);
}

/**
 * The one way the admin pages make markup: every interpolated value is escaped unless it is itself
 * `html` output, so text from servers, tools and clients can only ever be text.
 * @example html`<td>${tool.name}</td>` // tool.name "<script>" renders as the text "<script>"
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new SafeHtml(out);
}

function render(value: HtmlValue): string {
  if (value === undefined || value === null || value === false) return "";
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/**
 * A link target for a page of this UI: a relative path of our own, with query values encoded. Links
 * are never built from untrusted URLs, so no `javascript:` (or any scheme) can reach an href.
 */
export function href(page: string, query: Record<string, string | number | undefined> = {}): string {
  const params = Object.entries(query).filter((entry): entry is [string, string | number] => entry[1] !== undefined);
  const search = params.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`).join("&");
  return search ? `${page}?${search}` : page;
}
