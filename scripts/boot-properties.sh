#!/usr/bin/env bash
# Prints the Spring Boot properties table of docs/spring-boot.md from the configuration metadata that
# spring-boot-configuration-processor generates for disco-spring-boot (build it first:
# mvn -B -o -q -pl disco-spring-boot -am compile).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - disco-spring-boot/target/classes/META-INF/spring-configuration-metadata.json <<'PY'
import json, re, sys
meta = json.load(open(sys.argv[1]))

def code(text):
    """{@code x} -> `x`, with braces nested inside x (a path pattern's {variable})."""
    out, i = [], 0
    while (j := text.find("{@code ", i)) >= 0:
        out.append(text[i:j])
        k, depth = j + 7, 1
        while k < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        out.append("`" + text[j + 7:k - 1] + "`")
        i = k
    return "".join(out) + text[i:]
print("| property | default | meaning |")
print("|---|---|---|")
for p in sorted(meta["properties"], key=lambda p: p["name"]):
    if not p["name"].startswith("disco."):
        continue
    d = p.get("defaultValue")
    if isinstance(d, bool):
        d = str(d).lower()
    elif isinstance(d, list):
        d = ",".join(d)
    desc = code(p.get("description", "")).replace("|", "\\|")
    desc = desc[:1].upper() + desc[1:]
    print(f"| `{p['name']}` | {'`' + str(d) + '`' if d not in (None, '') else ''} | {desc} |")
PY
