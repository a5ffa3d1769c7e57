/* Wide tables on narrow screens: on a phone one that does not fit stacks (data-label
 * cells, custom.css); one that still overflows scrolls in its box with a cue and fades. */
(() => {
  "use strict";

  const CUES = {
    en: "Scroll sideways to see every column →",
    "zh-CN": "左右滑动可查看所有列 →",
  };
  const PHONE = window.matchMedia("(max-width: 720px)");
  const boxes = [];

  function label(table) {
    const head = table.tHead && table.tHead.rows[0];
    if (!head) return false;
    const names = [...head.cells].map((cell) => cell.textContent.trim());
    // A column without a name, or a cell over several columns: not stackable.
    const spans = [...table.querySelectorAll("th, td")].some((cell) => cell.colSpan > 1);
    if (names.some((text) => !text) || spans) return false;
    for (const body of table.tBodies) {
      for (const row of body.rows) {
        [...row.cells].forEach((cell, index) => {
          if (!cell.textContent.trim()) cell.classList.add("blank");
          else if (names[index]) cell.dataset.label = names[index];
        });
      }
    }
    return true;
  }

  function wrap(table) {
    const box = table.parentElement.classList.contains("pst-scrollable-table-container")
      ? table.parentElement
      : table;
    const wrapper = document.createElement("div");
    wrapper.className = "table-scroll";
    box.replaceWith(wrapper);
    const cue = document.createElement("p");
    cue.className = "table-scroll-cue";
    cue.setAttribute("aria-hidden", "true");
    const lang = document.documentElement.lang;
    cue.textContent = CUES[lang] || CUES[lang.split("-")[0]] || CUES.en;
    wrapper.append(cue, box);
    box.addEventListener("scroll", () => edges(wrapper, box), { passive: true });
    return { table, box, wrapper, stackable: label(table) };
  }

  function overflows(box) {
    return box.scrollWidth > box.clientWidth + 1;
  }

  function edges(wrapper, box) {
    const left = Math.abs(box.scrollLeft);
    wrapper.classList.toggle("at-start", left <= 1);
    wrapper.classList.toggle("at-end", left + box.clientWidth >= box.scrollWidth - 1);
  }

  function update() {
    for (const { table, box, wrapper, stackable } of boxes) {
      if (table.getClientRects().length === 0) continue; // in a closed <details>
      table.classList.remove("stacked");
      if (stackable && PHONE.matches && overflows(box)) table.classList.add("stacked");
      wrapper.classList.toggle("overflowing", overflows(box));
      edges(wrapper, box);
    }
  }

  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      update();
    });
  }

  function start() {
    const article = document.querySelector(".bd-article");
    if (!article) return;
    for (const table of article.querySelectorAll("table")) {
      if (table.closest(".sphx-glr-script-out, .cell_output, .table-scroll")) continue;
      boxes.push(wrap(table));
    }
    update();
    window.addEventListener("resize", schedule);
    document.addEventListener("toggle", schedule, true);
    if (document.fonts) document.fonts.ready.then(schedule);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
