"""`tf.train.SessionRunHook` and the values passed to its methods.

A hook sees every `MonitoredSession.run`: `before_run` may add fetches,
feeds and options to the call (a `SessionRunArgs`), `after_run` gets their
values (a `SessionRunValues`) and may ask the session to stop through the
`SessionRunContext`. `begin` runs before the graph is finalized (the last
chance to add ops), `after_create_session` once the session exists (also
after a recovery re-creates it), `end` when the session closes normally.
"""
import collections


class SessionRunHook:
    """Hook to extend calls to MonitoredSession.run(); every method is optional."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass

    def __repr__(self):
        return f"<{type(self).__name__}>"


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to a `run` call: fetches (any nested structure), feeds, RunOptions."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The call a hook is seeing (`original_args`, `session`); `request_stop()` ends the loop."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        return self._original_args

    @property
    def session(self):
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True

    def __repr__(self):
        return f"<SessionRunContext stop_requested={self._stop_requested}>"


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """The values of a hook's fetches (same structure), and the call's RunOptions and RunMetadata."""
