"""A sweep view drawn as SVG text: one row a client call, one cell a position, a panel a behaviour,
coloured by outcome class, with a legend. Plain text, so it diffs, and readable without colour: each
run of equal cells carries its class's mark and a tooltip naming it."""

from __future__ import annotations

from html import escape

CELL = 14  # a position's width and a row's height
FONT = 11
CHAR = 6.4  # a character's width at FONT in sans-serif, near enough to size the label column
PAD = 10
GAP = 4  # between one client's rows and the next's


def _text(x: float, y: float, text: str, **attributes: str) -> str:
    extra = "".join(f' {name.replace("_", "-")}="{value}"' for name, value in attributes.items())
    return f'<text x="{x:g}" y="{y:g}"{extra}>{escape(text)}</text>'


def _runs(cells: list) -> list[tuple[int, int]]:
    """(first index, length) of each run of equal cells."""
    runs: list[tuple[int, int]] = []
    for index, cell in enumerate(cells):
        if runs and cells[runs[-1][0]] is cell:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((index, 1))
    return runs


def _legend(legend, y: float, width: float) -> tuple[list[str], float]:
    """The classes in equal columns, as many to a line as fit."""
    out, x = [], PAD
    item = 2 * CELL + max(len(outcome.name) for outcome in legend) * CHAR
    for outcome in legend:
        if x + item > width:
            x, y = PAD, y + CELL + 6
        out.append(f'<rect x="{x:g}" y="{y:g}" width="{CELL}" height="{CELL}" fill="{outcome.colour}"/>')
        out.append(_text(x + CELL / 2, y + CELL - 3, outcome.mark, text_anchor="middle", font_size="9"))
        out.append(_text(x + CELL + 5, y + CELL - 3, outcome.name))
        x += item
    return out, y + CELL


def _panel(
    heading: str, labels: list[str], rows: list[list], left: float, y: float, groups: list[int], bounds: list[int]
) -> tuple[list[str], float]:
    """One behaviour's rows; a gap before each row in ``groups`` (a client's first), a dark line
    before each position in ``bounds`` (where the server starts to send another kind of reply)."""
    count = len(rows[0])
    out = [_text(PAD, y + FONT, heading, font_weight="bold")]
    y += FONT + 6
    for position in range(1, count + 1):  # the position numbers
        out.append(_text(left + (position - 0.5) * CELL, y + 8, str(position), text_anchor="middle", font_size="8"))
    y += 12
    top, lines = y, ""
    for index, (label, cells) in enumerate(zip(labels, rows)):
        if index in groups and index:
            y += GAP
        lines += f"M{left:g} {y:g}H{left + count * CELL:g}"
        out.append(_text(left - 6, y + CELL - 3, label, text_anchor="end"))
        for first, length in _runs(cells):
            outcome, x = cells[first], left + first * CELL
            where = f"{first + 1}" if length == 1 else f"{first + 1}-{first + length}"
            tip = escape(f"{label}, {heading.split(':')[0]}, at {where}: {outcome.name}")
            out.append(
                f'<rect x="{x:g}" y="{y:g}" width="{length * CELL}" height="{CELL}" fill="{outcome.colour}">'
                f"<title>{tip}</title></rect>"
            )
            out.append(_text(x + CELL / 2, y + CELL - 3.5, outcome.mark, text_anchor="middle", font_size="9"))
        y += CELL
    lines += "".join(f"M{left + n * CELL:g} {top:g}V{y:g}" for n in range(1, count))
    out.append(f'<path d="{lines}" stroke="#fff" stroke-width="1"/>')  # cell borders, over the runs
    phases = "".join(f"M{left + (n - 1) * CELL:g} {top - 2:g}V{y + 2:g}" for n in bounds)
    out.append(f'<path d="{phases}" stroke="#000" stroke-width="1.5"/>')
    return out, y


def draw(
    labels: list[str],
    groups: list[int],
    panels: dict[str, list[list]],
    phases: list[tuple[str, list[int]]],
    legend,
    title: str,
    headings: dict[str, str],
) -> str:
    """The SVG text. ``panels``: behaviour -> one list of outcome classes a label, one a position;
    ``groups``: the index of each client's first label; ``phases``: what the server sent, named,
    with its positions; ``legend``: the classes in order."""
    count = len(next(iter(panels.values()))[0])
    left = PAD + max(len(label) for label in labels) * CHAR + 8
    width = left + count * CELL + PAD
    out = [_text(PAD, PAD + FONT + 2, title, font_weight="bold", font_size="13")]
    y = PAD + FONT + 10
    said = "; ".join(f"{n[0]}" + (f"-{n[-1]}" if len(n) > 1 else "") + f" {name}" for name, n in phases)
    # the two lines of the subtitle, so that it fits the picture's width whatever the phases say
    out.append(_text(PAD, y + FONT, "Positions (the token limit the reply was cut at):"))
    y += FONT + 4
    out.append(_text(PAD, y + FONT, f"{said}."))
    drawn, y = _legend(legend, y + FONT + 8, width)
    out += drawn
    for behaviour, rows in panels.items():
        bounds = [numbers[0] for _, numbers in phases[1:]]
        drawn, y = _panel(headings[behaviour], labels, rows, left, y + 16, groups, bounds)
        out += drawn
    height = y + PAD
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
        f'viewBox="0 0 {width:g} {height:g}" role="img" aria-labelledby="title" '
        f'font-family="sans-serif" font-size="{FONT}">'
    )
    background = '<rect width="100%" height="100%" fill="#fff"/>'
    body = "\n".join(out)
    return f'{head}\n<title id="title">{escape(title)}</title>\n{background}\n{body}\n</svg>\n'
