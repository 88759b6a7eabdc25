/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The admin page's only script, served as /ui/ui.js (the CSP allows no inline script). It runs in the
 * browser: written here as a function so it is type-checked and linted with the rest, and sent as its text.
 * Both of its jobs fetch fragments the server rendered (and escaped), and swap them in.
 */
function adminPageScript(): void {
  const swap = async (target: Element, url: string) => {
    const response = await fetch(url, { credentials: "same-origin", headers: { accept: "text/html" } });
    if (response.ok) target.innerHTML = await response.text();
  };
  // Tools: the search_tools ranking as you type.
  const search = document.querySelector<HTMLInputElement>("input[data-live-search]");
  const results = document.getElementById("search-results");
  if (search && results) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let asked = 0;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const ask = ++asked;
        const url = `${search.dataset.liveSearch}?q=${encodeURIComponent(search.value)}`;
        void fetch(url, { credentials: "same-origin" }).then(async (response) => {
          // A slower answer to an older query never replaces a newer one.
          if (response.ok && ask === asked) results.innerHTML = await response.text();
        });
      }, 120);
    });
  }
  // Activity: the rows again every two seconds, with the page's own filters.
  const rows = document.querySelector<HTMLElement>("[data-live-rows]");
  if (rows) setInterval(() => void swap(rows, `${rows.dataset.liveRows}${window.location.search}`), 2000);
}

/** The script's text, as /ui/ui.js serves it. */
export const CLIENT_SCRIPT = `"use strict";\n(${adminPageScript.toString()})();\n`;
