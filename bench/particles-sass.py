"""Counts the SASS instructions of the N-body kernel's tile loop per interaction.

Usage: python3 bench/particles-sass.py nbody.sass [ptxas.txt]
  (nbody.sass from `cuobjdump -sass` of the cubin of examples/particles/src/nbody.kernel.ts, ptxas.txt from
  `nvcc -Xptxas -v` of the same file: adds the registers).

For each `step_*` and `pulls_*` function: the tile loop (the innermost loop that holds the barriers and the
interactions: of the backward branches whose body contains a BAR.SYNC, the shortest among those with the most
MUFU.RSQ; `pulls` has an outer loop over groups around it) is one tile; its instructions (NOPs excluded) divided by the interactions a thread computes per tile
(BLOCK / SPLIT tile entries times BODIES bodies, from the function's name) is the figure per interaction,
tile loads, barriers and loop control included. Also the same for the span between the two barriers (the
interactions alone), and the instructions of the tile loop by kind.
"""

import re
import sys
from collections import Counter

sass_file = sys.argv[1]
registers = {}
if len(sys.argv) > 2:
    current = None
    for line in open(sys.argv[2]):
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            current = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and current:
            registers[current] = int(m.group(1))

functions = {}
name = None
for line in open(sass_file):
    m = re.search(r"Function : (\w+)", line)
    if m:
        name = m.group(1)
        functions[name] = []
        continue
    m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
    if m and name:
        address = int(m.group(1), 16)
        text = m.group(2).strip()
        functions[name].append((address, text))


def opcode(text):
    words = text.split()
    if words[0].startswith("@"):
        words = words[1:]
    return words[0]


for name, code in sorted(functions.items()):
    if not name.startswith(("step", "pulls")):
        continue
    constants = dict((k, int(v)) for k, v in re.findall(r"([A-Z]+)_(\d+)", name))
    per_tile = constants["BLOCK"] // constants.get("SPLIT", 1) * constants["BODIES"]
    loop = None
    for address, text in code:
        m = re.search(r"BRA (0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < address:
            body = [(a, t) for a, t in code if int(m.group(1), 16) <= a <= address]
            if any("BAR.SYNC" in t for _, t in body):
                rank = (sum("MUFU.RSQ" in t for _, t in body), -len(body))
                if loop is None or rank > best:
                    loop, best = body, rank
    if loop is None:
        print(f"{name}: no tile loop found")
        continue
    ops = [opcode(t) for _, t in loop if opcode(t) != "NOP"]
    bars = [i for i, (_, t) in enumerate(loop) if "BAR.SYNC" in t]
    between = [opcode(t) for _, t in loop[bars[0] + 1 : bars[-1]] if opcode(t) != "NOP"] if len(bars) >= 2 else ops
    kinds = Counter(re.sub(r"\..*", "", o) if not o.startswith(("MUFU", "LDS", "LDG")) else o for o in ops)
    regs = f"{registers[name]} registers, " if name in registers else ""
    print(
        f"{name}: {regs}tile loop {len(ops)} instructions for {per_tile} interactions = {len(ops) / per_tile:.2f} per interaction"
        f" (between the barriers {len(between) / per_tile:.2f}); "
        + ", ".join(f"{k} {v}" for k, v in kinds.most_common(12))
    )
