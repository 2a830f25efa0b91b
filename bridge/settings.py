"""How long and how often to measure. Vocabulary (used in code, README and
reports alike):

- warm-up: calls run first and discarded (NIF loading, caches, fetches);
- loop: back-to-back calls timed as one; `loops` is calibrated so that one
  sample lasts about `sample_ms`, far above the clock's resolution;
- sample: one timed loop; each cell gets `samples` of them;
- openssl runs: `openssl speed` gives one count per process, so a cell gets
  `openssl_runs` processes of `openssl_seconds` each, one sample per run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Settings:
    warmup_ms: int = 300
    sample_ms: int = 20
    samples: int = 30
    openssl_seconds: int = 1
    openssl_runs: int = 5
    quick: bool = False

    @property
    def worker_args(self) -> dict[str, int]:
        return {
            "warmup_ns": self.warmup_ms * 1_000_000,
            "sample_ns": self.sample_ms * 1_000_000,
            "samples": self.samples,
        }

    def bench_timeout(self, per_op_hint_s: float = 0.0) -> float:
        """Seconds to wait for one bench reply before declaring the worker hung:
        the planned time, doubled, plus calibration and a generous margin."""
        planned = (self.warmup_ms + self.sample_ms * (self.samples + 4)) / 1000
        return 2 * planned + 30 + 4 * per_op_hint_s

    def to_json(self) -> dict:
        return asdict(self)


DEFAULT = Settings()
QUICK = Settings(warmup_ms=50, sample_ms=5, samples=10, openssl_runs=2, quick=True)
