"""What the sanitizer costs on the worst text one message may hold.

An import cuts a text block to `MAX_MESSAGE_BYTES` plus `TRANSFORM_MARGIN` characters before the
sanitizer reads it (`engine.render.precut_text_blocks`), so that is the longest text `redact` is given.
Each row is one short unit repeated to that length without a space: the shapes that made a rule read
the rest of the run once per copy (a run of keys, of URL heads, of weakly named values, of private
key headers, of command names, of here-strings and pipes, of tool results' headers, of paths,
echoed variables or Python programs after one header, of one echoed argument), and a plain line of prose and code for
comparison. The target is that no such message
costs more than `WORST_MESSAGE_S` to redact. `nox -s perf` reports it with the rest; `python -m
perf.sanitizer` measures it alone.
"""

from __future__ import annotations

import time
from typing import Any

from engine.render import MAX_MESSAGE_BYTES, TRANSFORM_MARGIN
from engine.sanitize import redact
from perf.config import Progress

MESSAGE_CHARS = MAX_MESSAGE_BYTES + TRANSFORM_MARGIN
WORST_MESSAGE_S = 1.0
ROUNDS = 3
_KEY = "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv"
# label -> the unit repeated; the first is ordinary text, the others the adversarial shapes.
UNITS: dict[str, str] = {
    "prose and code": "The retry test flaked because DB_HOST=db.internal and timeout: 30 were set. ",
    "stripe keys": "sk_live_" + _KEY,
    "github tokens": "ghp_" + _KEY,
    "anthropic keys": "sk-ant-api03-" + _KEY,
    "openai heads": "sk-",
    "jwt heads": "eyJ" + _KEY[:24],
    "url heads": "http://a:b",
    "assignments": "a=b,",
    "weak names": "auth=x1,",
    "query values": "auth=?",
    "templates": "token=<?",
    "key headers": "-----BEGIN RSA PRIVATE KEY-----",
    "command names": "keytool -a b ",
    "mongo commands": "mongosh -u x ",
    "registry settings": "http-basic.",
    "nested command names": "snmpgetnext snmpget -v3 ",
    "here-strings": "--with-token a <<<",
    "printf pipes": "printf %s x | ",
    "pgpass lines": "echo a:b:c:d:e > .pgpass",
    "secret reads": "\n[Bash result: op read x]\ny",
    "read headers": "\n[Bash result: sudo -E A=b k (k (get secret x ; printenv a.a.a.",
    "secret paths": "/run/secrets",
    "echoed variables": "; echo ${A_TOKEN:-",
    "echo arguments": "$A_TOKEN:",
    "python programs": "; python -c 'print(os.environ[",
}
# What stands before a unit's first copy, where a shape needs it: one header over the whole run.
HEADS: dict[str, str] = {
    "secret paths": "[Bash result: cat ",
    "echoed variables": "[Bash result: ",
    "echo arguments": "[Bash result: echo $A_TOKEN",
    "python programs": "[Bash result: ",
}


def measure_sanitizer(
    say: Progress, *, chars: int = MESSAGE_CHARS, rounds: int = ROUNDS
) -> dict[str, Any]:
    """`redact` on each unit repeated to `chars` characters: the median of `rounds` runs."""
    rows: list[dict[str, Any]] = []
    for label, unit in UNITS.items():
        text = (HEADS.get(label, "") + unit * (chars // len(unit) + 1))[:chars]
        runs = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            _, counts = redact(text)
            runs.append(time.perf_counter() - t0)
        median = sorted(runs)[len(runs) // 2]
        rows.append(
            {"label": label, "unit": unit, "median_s": median, "redacted": sum(counts.values())}
        )
        say(f"sanitizer: {label}: {median:.3f} s for {chars} characters")
    worst = max(rows[1:], key=lambda row: float(row["median_s"]))
    return {
        "chars": chars,
        "rounds": rounds,
        "rows": rows,
        "worst": worst["label"],
        "worst_s": worst["median_s"],
        "target_s": WORST_MESSAGE_S,
    }


def sanitizer_lines(report: dict[str, Any]) -> list[str]:
    """The report's section: one line per unit."""
    san = report.get("sanitizer")
    if not san:
        return []
    lines = [
        f"sanitizer, one message of {san['chars']} characters (the import's cut), median of "
        f"{san['rounds']}: worst {san['worst']} {san['worst_s']:.3f} s",
    ]
    lines += [
        f"  {row['label']:<20} {row['median_s']:>7.3f} s  ({row['redacted']} redacted)"
        for row in san["rows"]
    ]
    return [*lines, ""]


def main() -> None:
    """`python -m perf.sanitizer`: this section alone, without building a corpus."""
    print("\n".join(sanitizer_lines({"sanitizer": measure_sanitizer(Progress())})))


if __name__ == "__main__":
    main()
