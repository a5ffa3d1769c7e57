/* autograd_notes.to_html: the row of each box, the rule of autograd_notes.layout
 * (draw_graph and the static SVG use it too; the tests hold them to the
 * same answers). out[b] lists the boxes b links down to. A box's row is its
 * longest distance from a box nothing links to (Kahn's order); where a
 * cycle is left (a module used twice), the shortest distance from the root
 * box instead. Boxes that link to nothing, and boxes the root does not
 * reach, go to the bottom row. */
function AN_LAYERS(out, root) {
  "use strict";
  var m = out.length, row = new Int32Array(m), incoming = new Int32Array(m);
  var b, k, t, queue = [], head = 0, bottom = 0;
  for (b = 0; b < m; b++) for (k = 0; k < out[b].length; k++) incoming[out[b][k]]++;
  for (b = 0; b < m; b++) if (!incoming[b]) queue.push(b);
  while (head < queue.length) {
    b = queue[head++];
    for (k = 0; k < out[b].length; k++) {
      t = out[b][k];
      if (row[t] < row[b] + 1) row[t] = row[b] + 1;
      if (--incoming[t] === 0) queue.push(t);
    }
  }
  if (queue.length < m) { // a cycle: breadth first from the root
    row.fill(-1);
    if (m) { row[root] = 0; queue = [root]; head = 0; }
    while (head < queue.length) {
      b = queue[head++];
      for (k = 0; k < out[b].length; k++) {
        t = out[b][k];
        if (row[t] < 0) { row[t] = row[b] + 1; queue.push(t); }
      }
    }
  }
  for (b = 0; b < m; b++) if (row[b] > bottom) bottom = row[b];
  for (b = 0; b < m; b++) if (row[b] < 0 || !out[b].length) row[b] = bottom;
  return row;
}
