"""`bridge env`: start each runtime once, without measuring, and describe it."""

from __future__ import annotations

import os

from bridge.hw import ab, hardware
from bridge.measure.plan import Plan
from bridge.measure.session import Progress, Session
from bridge.measure.startup import library_build, runtime_specs
from bridge.report.context import Environment
from bridge.report.envinfo import EnvDescription, EnvHardware
from bridge.runtimes.openssl import mask_evidence
from bridge.system import environment


def describe(plan: Plan, progress: Progress | None = None) -> EnvDescription:
    """Start each runtime once, without measuring: environment, provenance,
    and the masks an A/B run would use (`bridge env`)."""
    cpu = environment.cpu()
    armcap = hardware.armcap_from_flags(cpu.flags) if cpu.arch == "aarch64" else None
    experiments = []
    with Session(plan.settings, progress) as session:
        # All launched at once, to boot side by side (bridge.measure.startup).
        for starting in [session.launch(spec) for spec in runtime_specs(plan)]:
            session.ready(starting)
            live = session.commit(starting)
            if live is None:
                continue
            features = ab.kinds_features(plan.scenarios, live.kind)
            ctx = ab.plan(live.info, features, cpu, os.environ, armcap)
            ctx.build = library_build(live)
            if ctx.mask is not None:
                ctx.mask_check = mask_evidence(plan.openssl, ctx)
            experiments.append(ctx.record())
    return EnvDescription(
        # As collected: each collector's keys, in its order (Environment.json_as_read).
        environment=Environment.from_json(environment.collect()),
        runtimes=tuple(x.info for x in session.live),
        hardware=EnvHardware(
            experiments=tuple(experiments),
            skipped=tuple(session.skipped),
            errors=tuple(session.errors),
        ),
    )
