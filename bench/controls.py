"""The control scenarios, many times over: masking SHA cannot change
SHA-512, masking AES-NI and PCLMULQDQ cannot change ChaCha20-Poly1305, so
no run may say "used" (issue 25). Runs `bridge run sha512 --quick` and
`bridge run chacha20-poly1305 --quick` N times each (default 10), and prints
per run: the load average before and after, what the run's noise block
recorded (other processes' CPU, steal), and its verdicts by kind; then the
total of false "used" verdicts. Exit status 1 when there is one.

Run: .venv/bin/python bench/controls.py [--runs N] [--scenario NAME ...]
[--json FILE]. A --quick sha512 run takes about half a minute (its openssl
cells run a second each), so ten of each take about ten minutes.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTROLS = ("sha512", "chacha20-poly1305")


def load() -> float:
    return os.getloadavg()[0]


def one(scenario: str, out: Path) -> dict:
    before = load()
    done = subprocess.run(
        [sys.executable, "-m", "bridge", "run", scenario, "--quick", "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    after = load()
    if done.returncode != 0:
        return {"scenario": scenario, "error": done.stderr.strip()[-300:]}
    report = json.loads(out.read_text())
    noise = report.get("noise") or {}
    counts = collections.Counter(v["verdict"] for v in report["verdicts"])
    used = [
        f"{v['runtime']} {v['call_id']} {v['size']}: {v['speedup']:.2f}x"
        for v in report["verdicts"]
        if v["verdict"] == "used"
    ]
    return {
        "scenario": scenario,
        "load": [round(before, 2), round(after, 2)],
        "others_cpus": noise.get("others_cpus"),
        "steal": noise.get("steal"),
        "verdicts": dict(counts),
        "used": used,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--scenario", action="append", choices=CONTROLS)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in args.scenario or CONTROLS:
            for i in range(args.runs):
                row = one(scenario, Path(tmp) / f"{scenario}-{i}.json")
                rows.append(row)
                if "error" in row:
                    print(f"{scenario} run {i + 1}: failed: {row['error']}")
                    continue
                print(
                    f"{scenario} run {i + 1}: load {row['load'][0]:.1f}->{row['load'][1]:.1f},"
                    f" others {row['others_cpus']} CPUs, steal {row['steal']};"
                    f" {row['verdicts']}; used: {len(row['used'])}"
                    + (f" ({'; '.join(row['used'])})" if row["used"] else "")
                )
    false = sum(len(r.get("used", ())) for r in rows)
    print(f"false 'used' verdicts: {false} in {len(rows)} runs")
    if args.json:
        args.json.write_text(json.dumps({"runs": rows, "false_used": false}, indent=1) + "\n")
    return 1 if false else 0


if __name__ == "__main__":
    sys.exit(main())
