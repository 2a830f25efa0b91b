"""proc.popen holds bridge's stop signals over the fork: a Ctrl-C that
arrives while a child is forked reaches bridge once the child exists, never
Python code that runs in the child between fork and exec."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from bridge.system import proc

# A SIGINT sent while the fork's hooks run: without the signals held, the
# handler raised KeyboardInterrupt inside the hooks ("Exception ignored in
# ... Traceback" on stderr, the parent's interrupt swallowed).
DURING_FORK = textwrap.dedent(
    """
    import os, signal, sys
    from bridge.system import proc

    sent = []

    def before():
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)

    os.register_at_fork(before=before)
    try:
        child = proc.popen(["true"])
    except KeyboardInterrupt:
        print("interrupted once the child existed")
        sys.exit(0)
    child.wait()
    print("never interrupted")
    """
)


def test_a_ctrl_c_during_the_fork_reaches_bridge_after_it():
    done = subprocess.run(
        [sys.executable, "-c", DURING_FORK], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "interrupted once the child existed"
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr


def test_the_child_starts_with_no_signal_blocked():
    """exec keeps a blocked mask: the child gets bridge's own, not the one
    held over the fork."""
    child = proc.popen(["grep", "^SigBlk:", "/proc/self/status"], stdout=subprocess.PIPE)
    out, _ = child.communicate(timeout=30)
    assert int(out.split()[1], 16) == 0, out
