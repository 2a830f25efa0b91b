"""One view of a report: the answer each question of the run gets, the
tables, the caveats, all worded here (bridge.view.build) and laid out by the
writers of bridge.render, which add only syntax."""

from bridge.view.build import build, section_of
from bridge.view.model import Detail, View

__all__ = ["Detail", "View", "build", "section_of"]
