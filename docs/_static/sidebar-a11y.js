// pydata-sphinx-theme's sidebar expanders are <summary> elements holding only a
// chevron icon, so they have no accessible name (axe: summary-name). Name them.
document.addEventListener("DOMContentLoaded", () => {
  for (const summary of document.querySelectorAll(".bd-sidenav details > summary")) {
    if (summary.textContent.trim() || summary.hasAttribute("aria-label")) continue;
    const link = summary.closest("li")?.querySelector(":scope > a");
    const name = link ? link.textContent.trim() : "this section";
    summary.setAttribute("aria-label", `Show or hide the pages under ${name}`);
  }
});
