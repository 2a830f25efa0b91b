"""Errors bridge reports to users, and the exit statuses they map to.

Library code raises these; only `bridge.cli.main` turns them into a message and an
exit status.
"""

from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    OK = 0
    RUN_FAILED = 1  # something went wrong while measuring
    USAGE = 2  # the user asked for something impossible or malformed
    # compare --fail-if-slower/--fail-if-faster: a significant difference past
    # the threshold (bridge.analysis.gate); distinct from 1, so a pipeline can
    # tell a regression from a broken job
    GATE = 3
    HANGUP = 129  # SIGHUP (the terminal or ssh session closed), after saving what was measured
    INTERRUPTED = 130  # Ctrl-C (SIGINT), after saving what was measured
    TERMINATED = 143  # SIGTERM, after saving what was measured


class BridgeError(Exception):
    """An error with a one-line message meant for the user."""

    status = ExitStatus.RUN_FAILED

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        """The message on one line. It may quote a report, a scenario file or
        a runtime's output: whatever prints it escapes it (bridge.plain)."""
        text = self.message if not self.hint else f"{self.message} ({self.hint})"
        return " ".join(text.split())


class UsageError(BridgeError):
    """Bad input: unknown scenario, bad option, unreadable file..."""

    status = ExitStatus.USAGE


class RuntimeUnavailable(BridgeError):
    """A runtime cannot run here at all (erl or openssl missing, no crypto app)."""


class WorkerError(BridgeError):
    """A worker process died, hung, or broke the protocol."""

    def __init__(self, message: str, *, runtime: str = "", stderr_tail: str = "", hint=None):
        super().__init__(message, hint=hint)
        self.runtime = runtime
        self.stderr_tail = stderr_tail


class OperationError(BridgeError):
    """A worker answered a request with an error reply."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # bad_request | unsupported | unknown_op | unknown_call | failed


class ProtocolError(BridgeError):
    """A frame that is not what the protocol allows."""


class BadTerm(ProtocolError):
    """A complete frame whose payload is not a valid term. The stream is still
    in step, so a worker can answer with an error and carry on."""


class BridgeWarning(UserWarning):
    """Something the user should know that does not stop the run (a damaged
    cache entry compiled again, a cache that cannot be written). Library code
    issues it with warnings.warn; bridge.cli.main prints it as one line on stderr."""
