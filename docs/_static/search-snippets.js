/* Search results quote the page's text, not the theme around it.
 *
 * Sphinx's search page fetches each result and quotes the text of its
 * [role="main"] element; in this theme that element also holds the header's
 * colour-mode switch, buttons and table of contents ("System Settings Light
 * Dark ..."). This quotes the article alone (or the anchored section of it),
 * with its white space collapsed. Loaded on search.html only
 * (docs/_ext/searchsnippets.py).
 */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined") return;
  Search.htmlToText = (htmlString, anchor) => {
    const html = new DOMParser().parseFromString(htmlString, "text/html");
    for (const query of [".headerlink", "script", "style", ".copybtn"]) {
      html.querySelectorAll(query).forEach((el) => el.remove());
    }
    const article = html.querySelector("article.bd-article");
    if (article === null) return "";
    // An anchor on an empty target (a module's) quotes the whole article.
    const part = anchor ? article.querySelector(anchor) : null;
    const quoted = part && part.textContent.trim() ? part : article;
    return quoted.textContent.replace(/\s+/g, " ").trim();
  };
});
