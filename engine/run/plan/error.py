"""The one error of planning a run: the file cannot be run as asked (no models, an unresolved
collection, nothing selected, an unreadable replay file). Its own module so that plans and the replay
source, which a plan loads, both raise it without importing each other."""


class PlanError(Exception):
    """The run cannot start (no models, an unresolved collection, nothing selected)."""
