/* autograd_notes.to_html: the view's interface words, in English and Chinese
 * (the page puts this script before view.js, which picks one by the reader's
 * languages). ui: the interface strings, {0}, {1}: values filled in by say().
 * What the Python side notes (a module's or fold's summary, marks, a
 * leaf's label) are words, said from notes.json (autograd_notes.words). Kept
 * apart from view.js so that a translation is edited here. */
var AN_TEXT = {
  ui: {
    en: { title: "Backward graph", search: "Search kind or module ", example: "e.g. Addmm or h.3.mlp",
      closeAll: "Close all", fit: "Fit", canvas: "graph: drag or arrows to pan, wheel or + and - to zoom, 0 to fit",
      graph: "backward graph", details: "details", results: "search results", open: " (press Enter to open)",
      status: "{0} boxes shown, {1} nodes", match: "; {0} match", model: "the model",
      callsOf: "calls {0}\u2013{1} of {2}", callsOfModel: "calls {0}\u2013{1} of the model", range: "{0}\u2013{1}", ncalls: "{0} calls", callOf: "{0} (call {1})",
      callNote: "call: {0} nodes", isNew: "  + new", saved: "  saved {0}", news: "  +{0} new",
      row: "- {0} \u00d7{1} ({2})", outside: "outside the model", inside: "in {0}", insideModel: "in the model", atCall: ", call {0}", more: "and {0} more",
      before: "Compared with the graph before",
      counts: "nodes: {0} -> {1} ({2} added, {3} removed); saved for backward: {4} -> {5} ({6})",
      legend: "On the boxes: \u201csaved -1.5 MiB\u201d is the change in the bytes a module saves for backward; \u201c+ new\u201d marks a node added (dashed outline), \u201c+3 new\u201d the added nodes inside a box.",
      removed: "Nodes removed", removedHere: "Nodes removed here",
      byModule: "saved by {0} (all its calls): {1} before, {2} now ({3}); nodes {4} -> {5}",
      byModel: "saved by the model (all its calls): {0} before, {1} now ({2}); nodes {3} -> {4}",
      addedIn: "{0} nodes added inside (marked + new)", heading: "Details",
      hint: "Click a box to open it (a module, a fold or one call of a fold) and to see what it saved.",
      anomaly: "Which nodes a create_graph=True backward made: cannot tell here (torch records it only under torch.autograd.set_detect_anomaly(True)).",
      path: "module path: {0}", sum: "{0} nodes; saved by them: {1} (summed per node, shared storages counted at each)",
      closeThis: "Close this {0}", module: "module", fold: "fold", call: "call", calls: "group of calls", run: "run",
      nodes: "group of nodes", nodesRange: "nodes {0}\u2013{1}", nnodes: "{0} nodes",
      nodeOf: "node {0} of {1} of {2}, in fold {3}", madeOutside: "made outside the model", names: "names: {0}",
      added: "added: its module's call has more nodes of this kind than before (they are alike: the last made are marked + new)",
      cols: "saved|shape|dtype|bytes", none: "saves no tensor (or backward freed them)", close: "Close {0}",
      found: "{0} in {1}" },
    zh: { title: "计算图", search: "按节点类型或模块搜索 ", example: "例如 Addmm 或 h.3.mlp",
      closeAll: "全部收起", fit: "适应窗口", canvas: "计算图：拖动或方向键平移，滚轮或 + 和 - 缩放，0 适应窗口",
      graph: "计算图", details: "详情", results: "搜索结果", open: "（按 Enter 展开）",
      status: "显示 {0} 个框，共 {1} 个节点", match: "；{0} 个匹配", model: "整个模型",
      callsOf: "{2} 的调用 #{0}\u2013#{1}", callsOfModel: "整个模型的调用 #{0}\u2013#{1}", range: "{0}\u2013{1}", ncalls: "{0} 次调用", callOf: "{0}（调用 #{1}）",
      callNote: "一次调用：{0} 个节点", isNew: "  + 新增", saved: "  保存 {0}", news: "  +{0} 新增",
      row: "- {0} \u00d7{1}（{2}）", outside: "模型之外", inside: "在 {0} 中", insideModel: "在整个模型中", atCall: "，调用 #{0}", more: "另有 {0} 个",
      before: "与之前的计算图相比",
      counts: "节点：{0} -> {1}（新增 {2}，移除 {3}）；为反向传播保存：{4} -> {5}（{6}）",
      legend: "框上的\u201c保存 -1.5 MiB\u201d是模块为反向传播保存的字节数的变化；\u201c+ 新增\u201d标出新增的节点（虚线边框），\u201c+3 新增\u201d是框内新增的节点数。",
      removed: "移除的节点", removedHere: "此处移除的节点",
      byModule: "{0} 保存的（所有调用）：之前 {1}，现在 {2}（{3}）；节点 {4} -> {5}",
      byModel: "整个模型保存的（所有调用）：之前 {0}，现在 {1}（{2}）；节点 {3} -> {4}",
      addedIn: "内部新增 {0} 个节点（标为 + 新增）", heading: "详情",
      hint: "点击一个框即可展开它（模块、折叠条目或折叠条目中的一次调用），并查看它保存了什么。",
      anomaly: "哪些节点由 create_graph=True 的反向传播生成：此处无法判断（torch 只在 torch.autograd.set_detect_anomaly(True) 下记录这一点）。",
      path: "模块路径：{0}", sum: "{0} 个节点；它们保存的：{1}（按节点相加，共享的存储在每个节点都计入）",
      closeThis: "收起这个{0}", module: "模块", fold: "折叠条目", call: "调用", calls: "调用组", run: "节点组",
      nodes: "节点段", nodesRange: "节点 {0}\u2013{1}", nnodes: "{0} 个节点",
      nodeOf: "{2} 的 {1} 个节点中的第 {0} 个，属于折叠条目 {3}", madeOutside: "在模型之外生成", names: "名称：{0}",
      added: "新增：它所在模块的这次调用中此类节点比之前多（它们相同：最后生成的标为 + 新增）",
      cols: "保存的张量|形状|数据类型|字节", none: "没有保存张量（或反向传播已释放它们）", close: "收起 {0}",
      found: "{0}（在 {1} 中）" }
  }
};
