"""A runtime run again with another libcrypto (`--libcrypto DIR`, see
bridge.system.libcrypto): the same runtime with DIR in front of LD_LIBRARY_PATH,
which refuses to start unless its process maps DIR's library."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from bridge.errors import BridgeError
from bridge.report import schema
from bridge.runtimes.base import Batch, BatchPlan, Job, Live, Runtime, RuntimeSpec
from bridge.system.libcrypto import CannotTell, Directory, Library, Mapped, soname_of


class NotLoaded(BridgeError):
    """A runtime started with --libcrypto DIR did not map DIR's library."""


class WithLibcrypto(Runtime):
    """A runtime started with DIR in front of LD_LIBRARY_PATH, which refuses
    to start unless its process maps DIR's libcrypto. Its id says so:
    erlang@25.2.3+libcrypto-3.5.4. Everything else is the inner runtime's."""

    def __init__(self, inner: Runtime, library: Library) -> None:
        self.kind = inner.kind  # type: ignore[misc]  # before __init__, which reads it
        super().__init__(inner.settings, inner.hw, inner.mask_env)
        self.inner = inner
        self.library = library
        self.samples_are_processes = inner.samples_are_processes  # type: ignore[misc]
        self.spreadable = inner.spreadable  # type: ignore[misc]
        inner.libcrypto_dir = str(library.dir)

    def launch(self) -> None:
        self.inner.launch()

    def start(self) -> schema.Runtime:
        info = self.inner.start()
        try:
            seen = self.inner.mapped_libcrypto()
            proof = [m for m in seen if m.same_file(self.library.file)]
            if not proof:
                shows = ", ".join(m.path for m in seen) or "no libcrypto at all"
                raise NotLoaded(
                    f"{info.id} with --libcrypto {self.library.given} did not load"
                    f" {self.library.file}: its process maps {shows}. Something outranks"
                    " LD_LIBRARY_PATH there (a wrapper script that sets it, a DT_RPATH,"
                    " a setuid binary), so its numbers would not be those of"
                    f" {self.library.version_text}; not running it"
                )
        except BaseException:
            self.inner.stop()
            raise
        runtime_id = variant_id(info.id, self.library)
        self.rename(runtime_id)
        details = {
            **info.details.to_json(),
            "libcrypto_loaded": [m.path for m in seen],
            "libcrypto_dir": {
                "given": self.library.given,
                "dir": str(self.library.dir),
                "file": str(self.library.file),
                "soname": self.library.soname,
                "version": self.library.version_text,
                "maps": [m.text() for m in proof],
            },
        }
        return dataclasses.replace(info, id=runtime_id, details=details)

    def stop(self) -> None:
        self.inner.stop()

    def bench(self, job: Job, plan: BatchPlan) -> Batch:
        return self.inner.bench(job, plan)

    def tc(self, job: Job, n: int) -> dict[str, Any]:
        return self.inner.tc(job, n)

    def rename(self, runtime_id: str) -> None:
        super().rename(runtime_id)
        self.inner.rename(runtime_id)

    def mapped_libcrypto(self) -> list[Mapped]:
        return self.inner.mapped_libcrypto()


def variant_id(base_id: str, library: Library) -> str:
    return f"{base_id}+libcrypto-{library.version}"


def variants(
    base: RuntimeSpec, live: Live, directories: Sequence[Directory]
) -> Iterator[RuntimeSpec | schema.Skipped]:
    """For a started runtime (`live`, from `base`, a session RuntimeSpec): one
    spec per --libcrypto directory that has a library of the soname the
    runtime loads, or a schema.Skipped saying why not."""
    if not directories or isinstance(live.driver, WithLibcrypto):
        return
    try:
        loaded = live.driver.mapped_libcrypto()
    except CannotTell as exc:
        loaded, why = [], exc.one_line()
    else:
        why = "its process maps no libcrypto"
    sonames = {m.path: soname_of(m.path) for m in loaded}
    for d in directories:
        label = f"{live.id}+libcrypto {d.given}"
        if not loaded:
            yield schema.Skipped(label, live.kind, f"cannot tell which libcrypto it loads: {why}")
            continue
        path, soname = next(iter(sonames.items()))
        library = d.by_soname.get(soname or "")
        if library is None:
            yield schema.Skipped(
                label,
                live.kind,
                f"it loads {soname or path} ({path}); {d.dir} has {', '.join(d.sonames)}:"
                " a libcrypto of another soname has another ABI and cannot stand in for it",
            )
        elif any(m.same_file(library.file) for m in loaded):
            yield schema.Skipped(
                variant_id(live.id, library),
                live.kind,
                f"{library.file} is the library it already loads",
            )
        else:
            yield dataclasses.replace(
                base,
                label=f"{base.label} with {library.file}",
                make=lambda hw, env, lib=library, make=base.make: WithLibcrypto(make(hw, env), lib),
            )
