// What a JavaScript client did with a reply, in a few classes: declared once, for the client matrix
// (matrix.mjs: its per-server tables and words) and its sweep view (sweep.mjs: the picture and its words).
//
// A class is judged from one of matrix.mjs's rows: the first whose test fits. `label` names it in the
// sweep's picture and words, `short` in a cell of the matrix's per-server tables. `fooled`: on a cut
// reply, the client took the cut for a whole reply (it ran the cut call, or handed the cut call or text
// over as finished).
export const OUTCOMES = [
  { name: "ran", label: "ran the tool", short: "runs the cut call", colour: "#a50026", fooled: true,
    fits: (row) => row.tool.startsWith("tool ran") },
  { name: "threw", label: "threw (or streamText ended in error)", short: "throws", colour: "#9e9e9e",
    fits: (row) => row.tool.startsWith("threw") || row.reports === "error" },
  // a field it hands over says cut: the status or finishReason, or incomplete_details' reason
  { name: "noticed", label: "noticed the cut", short: "sees the cut", colour: "#1a9850",
    fits: (row) => /\b(incomplete|length)\b/.test(row.reports) || row.details === "max_output_tokens" },
  { name: "refused", label: "refused the call (arguments do not parse)", short: "refuses the call",
    colour: "#fee08b", fits: (row) => row.tool.includes("tool not run") },
  { name: "call", label: "handed over the call as finished (arguments parse)", short: "trusts the cut",
    colour: "#f46d43", fooled: true,
    fits: (row) => /\barguments parse\b/.test(row.tool) || row.tool.includes("tool call, not run") },
  { name: "broken-call", label: "handed over the call as finished (arguments do not parse)",
    short: "trusts the cut", colour: "#fdae61", fooled: true,
    fits: (row) => row.tool.includes("arguments do not parse") },
  { name: "text", label: "took the text for a finished reply", short: "trusts the cut", colour: "#74add1",
    fooled: true, fits: () => true },
];

/** The first class that fits a matrix row. */
export function classOf(row) {
  return OUTCOMES.find(({ fits }) => fits(row));
}

/** The name of the first class that fits a matrix row. */
export function outcome(row) {
  return classOf(row).name;
}

/** How a row that threw failed, in words: `threw ToolChoiceViolationError`, or streamText's error ending. */
export function failure(row) {
  const thrown = row.tool.match(/^threw (\w+)/)?.[1];
  if (thrown) return `threw ${thrown}`;
  const rejected = row.tool.match(/\b(AI_\w+)/)?.[1];
  return `ended in finishReason "error"${rejected ? ` (${rejected} to onError)` : ""}`;
}

/** A row's outcome in a cell's few words: the class's short words, and for a throw what was thrown. */
export function short(row) {
  const found = classOf(row);
  if (found.name !== "threw") return found.short;
  const thrown = row.tool.match(/^threw (\w+)/)?.[1];
  return thrown ? `throws ${thrown}` : `ends in "error" (${row.tool.match(/\b(AI_\w+)/)?.[1] ?? "onError"})`;
}
