"""`tf.app` (TF1): run a script's `main` after parsing its command-line flags.
The flags are absl's, as TensorFlow's are (`tf.app.flags` is `tf.flags`)."""
import sys

from absl import app as _absl_app
from absl import flags  # noqa: F401 - tf.app.flags


def _parse_flags_tolerate_undef(argv):
    """Unknown flags are left for the program, as TF1's `tf.app.run` does."""
    return flags.FLAGS(argv, known_only=True)


def run(main=None, argv=None):
    """Parses the flags in `argv` (sys.argv), then exits with `main(remaining argv)`; `main`
    defaults to the `main` of the `__main__` module."""
    main = main or sys.modules["__main__"].main
    _absl_app.run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)
