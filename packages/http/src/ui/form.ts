import { HttpError } from "../errors";
import { html, type SafeHtml } from "./html";

/** Fields a generated form shows at most; a tool with more is called with the JSON box. */
const MAX_FIELDS = 100;

type Property = { type?: unknown; enum?: unknown; description?: unknown };
/** A tool's input schema, as its server sent it (untrusted: every field is checked before use). */
type ToolSchema = { properties?: Record<string, object>; required?: unknown } | undefined;

function propertiesOf(schema: ToolSchema): Array<[string, Property]> {
  const properties = schema?.properties;
  if (typeof properties !== "object" || properties === null) return [];
  return Object.entries(properties as Record<string, Property>).slice(0, MAX_FIELDS);
}

function kindOf(property: Property): "enum" | "boolean" | "number" | "string" | "json" {
  if (Array.isArray(property.enum)) return "enum";
  const type = Array.isArray(property.type) ? property.type.find((t) => t !== "null") : property.type;
  if (type === "boolean") return "boolean";
  if (type === "number" || type === "integer") return "number";
  if (type === "string") return "string";
  return "json";
}

/** The inputs of a form made from a tool's input schema: one per property, by its type, filled with `values` (the form as last sent). */
export function schemaFields(schema: ToolSchema, values: URLSearchParams = new URLSearchParams()): SafeHtml {
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as unknown[]) : []);
  const fields = propertiesOf(schema).map(([name, property], index) => {
    const id = `arg-${index}`;
    const field = `arg:${name}`;
    const value = values.get(field) ?? "";
    const option = (text: string) => html`<option value="${text}"${text === value ? html` selected` : ""}>${text}</option>`;
    const label = html`<label for="${id}">${name}${required.has(name) ? " *" : ""} <span class="muted">${kindOf(property)}</span></label>`;
    const help = typeof property.description === "string" ? html`<div class="muted">${property.description.slice(0, 500)}</div>` : "";
    switch (kindOf(property)) {
      case "enum":
        return html`${label}<select id="${id}" name="${field}"><option value=""></option>${(property.enum as unknown[])
          .slice(0, 200)
          .map((choice) => option(JSON.stringify(choice)))}</select>${help}`;
      case "boolean":
        return html`${label}<select id="${id}" name="${field}"><option value=""></option>${option("true")}${option("false")}</select>${help}`;
      case "number":
        return html`${label}<input type="number" step="any" id="${id}" name="${field}" value="${value}">${help}`;
      case "string":
        return html`${label}<input type="text" id="${id}" name="${field}" value="${value}">${help}`;
      default:
        return html`${label}<textarea id="${id}" name="${field}" placeholder="JSON">${value}</textarea>${help}`;
    }
  });
  return fields.length ? html`${fields}` : html`<p class="muted">This tool takes no arguments.</p>`;
}

/** The arguments a submitted form gives, read by the schema (never by what the browser says a field is); empty fields are left out. */
export function argumentsOf(schema: ToolSchema, form: URLSearchParams): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, property] of propertiesOf(schema)) {
    const text = form.get(`arg:${name}`);
    if (text === null || text === "") continue;
    const kind = kindOf(property);
    if (kind === "string") args[name] = text;
    else if (kind === "number") {
      const value = Number(text);
      if (!Number.isFinite(value)) throw new HttpError("BAD_REQUEST", `"${name.slice(0, 80)}" must be a number; "${text.slice(0, 40)}" is not one.`);
      args[name] = value;
    } else args[name] = parseJson(name, text);
  }
  return args;
}

function parseJson(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError("BAD_REQUEST", `"${name.slice(0, 80)}" must be JSON (such as "text", 3, true, [1] or {"a": 1}); fix the field and call again.`);
  }
}
