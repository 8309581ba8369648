// A sweep as a picture: one row per client, one cell per position, one panel per behaviour, a legend.
// Plain SVG text, no dependencies; every label is text, so the picture reads without colour too.

const CELL = 18; // a position's width and a row's height
const LABEL = 330; // the client names' column
const GAP = 6; // before the last position, where the reply finished: running the call there is right

function escaped(text) {
  return String(text).replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

function text(x, y, words, { size = 11, bold = false, middle = false } = {}) {
  const style = `${bold ? ' font-weight="bold"' : ""}${middle ? ' text-anchor="middle"' : ""}`;
  return `<text x="${x}" y="${y}" font-family="sans-serif" font-size="${size}"${style}>${escaped(words)}</text>`;
}

/** [first, end, outcome] for each run of one outcome along a row; the last position is a run of its own. */
function runs(row, positions, last) {
  const found = [];
  row.forEach((outcome, i) => {
    const run = found.at(-1);
    if (run && run[2] === outcome && positions[i] !== last) run[1] = i + 1;
    else found.push([i, i + 1, outcome]);
  });
  return found;
}

/**
 * view: { title, sweep, positions: [1, 2, ...], last, behaviours: ["buggy", ...], clients: [name, ...],
 *         outcomes: [{ name, label, colour }], cells: { [client]: { [behaviour]: [outcome name per position] } } }
 */
export function sweepSvg(view) {
  const { title, sweep, positions, last, behaviours, clients, outcomes, cells } = view;
  const colour = Object.fromEntries(outcomes.map(({ name, colour: fill }) => [name, fill]));
  const label = Object.fromEntries(outcomes.map((outcome) => [outcome.name, outcome.label]));
  const width = LABEL + positions.length * CELL + GAP + 20;
  const left = (i) => LABEL + i * CELL + (positions[i] === last ? GAP : 0);
  const parts = [];
  let y = 24;
  parts.push(text(10, y, title, { size: 14, bold: true }));
  for (const behaviour of behaviours) {
    y += 26;
    parts.push(text(10, y, `${behaviour}: ${sweep}@N, the reply cut at N tokens (finished at ${last})`,
      { bold: true }));
    y += 16;
    positions.forEach((position, i) => {
      const x = left(i) + CELL / 2;
      parts.push(text(x, y, position, { size: 9, middle: true, bold: position === last }));
    });
    y += 4;
    const top = y;
    for (const client of clients) {
      parts.push(text(10, y + CELL - 5, client));
      for (const [first, end, outcome] of runs(cells[client][behaviour], positions, last)) {
        const span = `${sweep}@${positions[first]}${end - first > 1 ? `-${positions[end - 1]}` : ""}`;
        parts.push(`<rect x="${left(first)}" y="${y}" width="${(end - first) * CELL - 1}" height="${CELL - 1}" `
          + `fill="${colour[outcome]}"><title>${escaped(`${client}, ${span}, ${behaviour}: ${label[outcome]}`)}`
          + "</title></rect>");
      }
      y += CELL;
    }
    positions.forEach((_, i) => { // a white line between positions, so each cell reads as one
      if (i) parts.push(`<line x1="${left(i) - 0.5}" y1="${top}" x2="${left(i) - 0.5}" y2="${y}" stroke="white"/>`);
    });
  }
  y += 14;
  const column = Math.ceil(outcomes.length / 2);
  outcomes.forEach((outcome, i) => {
    const x = 10 + Math.floor(i / column) * (width / 2);
    const row = y + (i % column) * CELL;
    parts.push(`<rect x="${x}" y="${row}" width="${CELL - 4}" height="${CELL - 4}" fill="${outcome.colour}"/>`);
    parts.push(text(x + CELL, row + CELL - 6, outcome.label));
  });
  const height = y + column * CELL + 8;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<title>${escaped(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    ...parts,
    "</svg>",
    "",
  ].join("\n");
}
