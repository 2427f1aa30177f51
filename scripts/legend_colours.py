#!/usr/bin/env python3
"""How far apart the series of each chart look: reads the legends of the
committed SVG charts (output/*/*.svg) and prints, per chart, the least
CIEDE2000 colour difference between two legend entries drawn with the same
kind of mark (two solid lines, two dots, two swatches), and the pair.
Entries whose marks differ (a solid and a dashed line, a dot and a ring)
are told apart by the mark and are not compared. A colour drawn with an
opacity is taken as it shows on white.

As a rule of thumb, a CIEDE2000 difference under about 10 is hard to see
between two thin lines, and over 20 is easy.

With --cvd, the same as seen with deuteranopia, protanopia and tritanopia
(Machado, Oliveira and Fernandes' 2009 simulation at full severity).

Usage: scripts/legend_colours.py [--cvd] [OUTPUT_DIR ...]   (default: output)
       scripts/legend_colours.py --all FILE.svg     (every entry and pair)
"""
import math
import re
import sys
from pathlib import Path

ELEMENT = re.compile(r"<(polyline|circle|rect|line|text)\b([^>]*)>(?:\s*([^<]*)</text>)?", re.S)
ATTR = re.compile(r'([\w-]+)="([^"]*)"')


def srgb_to_lab(c):
    def lin(u):
        u /= 255.0
        return u / 12.92 if u <= 0.04045 else ((u + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(u) for u in c)
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t):
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def ciede2000(c1, c2):
    l1, a1, b1 = srgb_to_lab(c1)
    l2, a2, b2 = srgb_to_lab(c2)
    cbar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(cbar**7 / (cbar**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dlp, dcp = l2 - l1, c2p - c1p
    if c1p * c2p == 0:
        dhp = 0.0
    elif abs(h2p - h1p) <= 180:
        dhp = h2p - h1p
    elif h2p - h1p > 180:
        dhp = h2p - h1p - 360
    else:
        dhp = h2p - h1p + 360
    dhp_big = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dhp / 2))
    lbar, cbarp = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        hbar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hbar = (h1p + h2p) / 2
    elif h1p + h2p < 360:
        hbar = (h1p + h2p + 360) / 2
    else:
        hbar = (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(hbar - 30))
        + 0.24 * math.cos(math.radians(2 * hbar))
        + 0.32 * math.cos(math.radians(3 * hbar + 6))
        - 0.20 * math.cos(math.radians(4 * hbar - 63))
    )
    dtheta = 30 * math.exp(-(((hbar - 275) / 25) ** 2))
    rc = 2 * math.sqrt(cbarp**7 / (cbarp**7 + 25**7))
    sl = 1 + 0.015 * (lbar - 50) ** 2 / math.sqrt(20 + (lbar - 50) ** 2)
    sc = 1 + 0.045 * cbarp
    sh = 1 + 0.015 * cbarp * t
    rt = -math.sin(math.radians(2 * dtheta)) * rc
    return math.sqrt(
        (dlp / sl) ** 2 + (dcp / sc) ** 2 + (dhp_big / sh) ** 2 + rt * (dcp / sc) * (dhp_big / sh)
    )


# Machado, Oliveira and Fernandes (2009), severity 1, on linear RGB.
CVD = {
    "deutan": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881)),
    "protan": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216), (-0.003882, -0.048116, 1.051998)),
    "tritan": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602), (0.004733, 0.691367, 0.303900)),
}


def simulate(c, matrix):
    """`c` as seen with the colour vision deficiency of `matrix`."""

    def lin(u):
        u /= 255.0
        return u / 12.92 if u <= 0.04045 else ((u + 0.055) / 1.055) ** 2.4

    def enc(u):
        u = min(max(u, 0.0), 1.0)
        return 12.92 * u if u <= 0.0031308 else 1.055 * u ** (1 / 2.4) - 0.055

    rgb = [lin(u) for u in c]
    return tuple(round(enc(sum(m * v for m, v in zip(row, rgb))) * 255) for row in matrix)


def hex_rgb(h):
    h = h.lstrip("#")
    return tuple(int(h[i : i + 2], 16) for i in (0, 2, 4))


def on_white(c, opacity):
    return tuple(round(u * opacity + 255 * (1 - opacity)) for u in c)


def points(kind, a):
    """The element's points (x, y)."""
    if kind == "polyline":
        nums = [float(v) for v in a.get("points", "").replace(",", " ").split()]
        return list(zip(nums[::2], nums[1::2]))
    if kind == "line":
        return [(float(a["x1"]), float(a["y1"])), (float(a["x2"]), float(a["y2"]))]
    if kind == "circle":
        return [(float(a["cx"]), float(a["cy"]))]
    if kind == "rect":
        x, y, w, h = (float(a[k]) for k in ("x", "y", "width", "height"))
        return [(x, y), (x + w, y + h)]
    return []


def legend(svg):
    """[(label, mark kind, (r, g, b) as seen on white)] of the legend's
    entries that have a mark: a mark is drawn just before its label, 50 to
    3 px left of it, at its height."""
    out = []
    pending = []
    for m in ELEMENT.finditer(svg):
        kind, attrs, text = m.group(1), dict(ATTR.findall(m.group(2))), m.group(3)
        if kind != "text":
            pending.append((kind, attrs))
            continue
        x, y = float(attrs.get("x", 0)), float(attrs.get("y", 0))
        mark = []
        for k, a in reversed(pending):
            pts = points(k, a)
            if pts and all(x - 50 <= px <= x - 3 and abs(py - y) <= 10 for px, py in pts):
                mark.append((k, a))
            else:
                break
        pending = []
        if not mark:
            continue
        mark.reverse()
        kinds = [k for k, _ in mark]
        filled = [a for k, a in mark if a.get("fill", "none") not in ("none", "")]
        if filled:
            a = filled[-1]
            colour = on_white(hex_rgb(a["fill"]), float(a.get("opacity", 1)))
        else:
            a = mark[-1][1]
            colour = on_white(hex_rgb(a.get("stroke", "#000000")), float(a.get("opacity", 1)))
        if kinds == ["circle"]:
            shape = "dot" if filled else "ring"
        elif kinds.count("polyline") == 1 and len(kinds) == 1:
            shape = "line"
        elif all(k == "polyline" for k in kinds):
            shape = "dashed" if len(kinds) == 3 else f"pattern{len(kinds)}"
        elif kinds == ["rect", "rect"] and all(a.get("fill", "none") not in ("none", "") for _, a in mark):
            shape = "pale-over-solid"
        elif "rect" in kinds:
            shape = "box"
        else:
            shape = "+".join(kinds)
        out.append(((text or "").strip(), shape, colour, x))
    # The legend's labels all start at one x (a label on a bar or a strip's
    # caption may have something drawn just left of it too).
    if not out:
        return out
    xs = [e[3] for e in out]
    mode = max(set(xs), key=lambda v: (xs.count(v), v))
    return [e[:3] for e in out if e[3] == mode]


def closest(entries, matrix=None):
    if matrix is not None:
        entries = [(label, shape, simulate(c, matrix)) for label, shape, c in entries]
    best = None
    for i in range(len(entries)):
        for j in range(i + 1, len(entries)):
            (la, sa, ca), (lb, sb, cb) = entries[i], entries[j]
            if sa != sb:
                continue
            d = ciede2000(ca, cb)
            if best is None or d < best[0]:
                best = (d, la, lb)
    return best


def main(args):
    if args[:1] == ["--all"]:
        entries = legend(Path(args[1]).read_text())
        for e in entries:
            print(f"{e[1]:7} {e[2]}  {e[0]}")
        for i in range(len(entries)):
            for j in range(i + 1, len(entries)):
                if entries[i][1] == entries[j][1]:
                    print(f"{ciede2000(entries[i][2], entries[j][2]):6.1f}  {entries[i][0]} | {entries[j][0]}")
        return
    cvd = "--cvd" in args
    args = [a for a in args if a != "--cvd"]
    dirs = [Path(a) for a in args] or [Path("output")]
    worst = []
    for d in dirs:
        for svg in sorted(d.glob("*/*.svg")):
            entries = legend(svg.read_text())
            c = closest(entries)
            name = f"{svg.parent.name}/{svg.stem}"
            if c is None:
                print(f"{name:45} {len(entries):2} entries, no two marks alike")
                continue
            line = f"{name:45} {len(entries):2} entries, min dE2000 {c[0]:5.1f}  {c[1]!r} vs {c[2]!r}"
            mins = [c[0]]
            if cvd:
                for kind, matrix in CVD.items():
                    k = closest(entries, matrix)
                    line += f"\n{'':48}{kind}: {k[0]:5.1f}  {k[1]!r} vs {k[2]!r}"
                    mins.append(k[0])
            print(line)
            worst.append(mins)
    if worst:
        for k, kind in enumerate(["normal vision"] + (list(CVD) if cvd else [])):
            w = [m[k] for m in worst]
            print(f"{kind}: charts {len(w)}, least {min(w):.1f}, under 10: {sum(v < 10 for v in w)}, "
                  f"under 20: {sum(v < 20 for v in w)}, median {sorted(w)[len(w) // 2]:.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
