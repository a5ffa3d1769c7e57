/* Search results quote the page's article (or the anchored section of it), not the
 * theme around it (Sphinx quotes [role="main"]: colour switch, buttons, contents) nor
 * the launch bar; a page whose title or file name holds the query ranks first
 * (Sphinx's Scorer.score hook). Loaded on search.html only (conf.py). */
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
  const query = (new URLSearchParams(location.search).get("q") || "").toLowerCase().trim();
  const words = query.split(/\s+/).filter((word) => word.length > 1);
  Scorer.score = ([docname, title, , , score]) => {
    const name = `${title} ${docname.split("/").pop().replace(/_/g, " ")}`.toLowerCase();
    if (query && name.includes(query)) return score + 100; // leaf tensor: 02_leaf_tensors
    return score + 10 * words.filter((word) => name.includes(word)).length;
  };
});
