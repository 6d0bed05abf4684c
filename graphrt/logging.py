"""`tf.logging` (TF1): verbosity levels over Python's logging."""
import logging as _logging

DEBUG, INFO, WARN, ERROR, FATAL = 10, 20, 30, 40, 50
WARNING = WARN
_logger = _logging.getLogger("graphrt")


def set_verbosity(level):
    _logger.setLevel(level)


def get_verbosity():
    return _logger.getEffectiveLevel()


def debug(msg, *args):
    _logger.debug(msg, *args)


def info(msg, *args):
    _logger.info(msg, *args)


def warning(msg, *args):
    _logger.warning(msg, *args)


warn = warning


def error(msg, *args):
    _logger.error(msg, *args)


def fatal(msg, *args):
    """Logs at FATAL (Python's CRITICAL); the program goes on, as TF1's `tf.logging.fatal`."""
    _logger.critical(msg, *args)


def log(level, msg, *args):
    _logger.log(level, msg, *args)


def vlog(level, msg, *args):
    _logger.log(level, msg, *args)


def log_if(level, msg, condition, *args):
    if condition:
        _logger.log(level, msg, *args)


# calls so far per call site (file, line), for log_every_n / log_first_n
_COUNTS = {}


def _count_here(depth=2):
    import sys
    frame = sys._getframe(depth)
    key = (frame.f_code.co_filename, frame.f_lineno)
    n = _COUNTS.get(key, 0)
    _COUNTS[key] = n + 1
    return n


def log_every_n(level, msg, n, *args):
    """Logs the 1st, (n+1)th, (2n+1)th... call from the same line."""
    if _count_here() % n == 0:
        _logger.log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    """Logs the first `n` calls from the same line."""
    if _count_here() < n:
        _logger.log(level, msg, *args)


def flush():
    for handler in _logger.handlers + _logging.getLogger().handlers:
        handler.flush()


def TaskLevelStatusMessage(msg):  # noqa: N802 - TF's name
    _logger.error(msg)
