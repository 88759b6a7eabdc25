import { describe, expect, it } from "vitest";
import { escapeHtml, href, html } from "./html";

describe("html", () => {
  it("escapes every interpolated text, in text and in attributes, so markup from a server stays text", () => {
    const name = `"><script>alert(1)</script><img src=x onerror='a'>\``;
    const out = html`<td title="${name}">${name}</td>`.text;
    expect(out).toBe(
      '<td title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&#39;a&#39;&gt;&#96;">&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&#39;a&#39;&gt;&#96;</td>',
    );
  });

  it("inserts its own output as it is, and lists item by item; nothing for undefined, null and false", () => {
    const items = ["<a>", "b"].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}${undefined}${null}${false}${0}</ul>`.text).toBe("<ul><li>&lt;a&gt;</li><li>b</li>0</ul>");
  });

  it("escapes & first-class: an escaped entity in the input is shown as typed", () => {
    expect(escapeHtml("&lt;")).toBe("&amp;lt;");
  });

  it("builds relative links whose query values are encoded, never a scheme from the value", () => {
    expect(href("tool", { name: "javascript:alert(1)&x=<y>" })).toBe("tool?name=javascript%3Aalert(1)%26x%3D%3Cy%3E");
    expect(href("jobs", { id: undefined })).toBe("jobs");
  });
});
