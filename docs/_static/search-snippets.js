/* Search results quote the page's article (or the anchored section of it), not the
 * theme around it (Sphinx quotes [role="main"]: colour switch, buttons, contents) nor
 * the launch bar. Loaded on search.html only (conf.py). */
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined") return;
  Search.htmlToText = (htmlString, anchor) => {
    const html = new DOMParser().parseFromString(htmlString, "text/html");
    for (const query of [".headerlink", "script", "style", ".copybtn", ".launch-bar"]) {
      html.querySelectorAll(query).forEach((el) => el.remove());
    }
    const article = html.querySelector("article.bd-article");
    if (article === null) return "";
    const part = anchor ? article.querySelector(anchor) : null; // empty: whole article
    const quoted = part && part.textContent.trim() ? part : article;
    return quoted.textContent.replace(/\s+/g, " ").trim();
  };
});
