"""Status-code exceptions, named as TensorFlow names them.

Every runtime failure a user can see is an `OpError` subclass carrying the
TF status code, a message, and where known the node, device and rendezvous
key involved, so an error from deep inside a partition still says where it
happened. Construction accepts both graphrt's `Error(message, node=...)` and
TensorFlow's `Error(node_def, op, message)`.
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """Base class of every runtime error; `error_code` is the TF status code."""

    error_code = UNKNOWN

    def __init__(self, *args, node=None, device=None, key=None):
        if len(args) in (3, 4):  # TensorFlow's signature: (node_def, op, message[, error_code])
            node_def, op, message = args[:3]
            if len(args) == 4:
                self.error_code = args[3]
            if node is None and op is not None:
                node = getattr(op, "name", None)
        elif len(args) == 1:
            node_def, op, message = None, None, args[0]
        else:
            raise TypeError(f"{type(self).__name__} takes (message) or (node_def, op, message[, error_code])")
        super().__init__(message)
        self.message = str(message)
        self.node_def = node_def
        self.op = op
        self.node = node
        self.device = device
        self.key = key

    def __reduce__(self):  # keep picklable for multiprocessing test helpers
        return (_rebuild, (type(self), self.message, self.node, self.device, self.key))

    def __str__(self):
        return self.message


def _rebuild(cls, message, node, device, key):
    return cls(message, node=node, device=device, key=key)


class CancelledError(OpError):
    error_code = CANCELLED


class UnknownError(OpError):
    error_code = UNKNOWN


class InvalidArgumentError(OpError):
    error_code = INVALID_ARGUMENT


class DeadlineExceededError(OpError):
    error_code = DEADLINE_EXCEEDED


class NotFoundError(OpError):
    error_code = NOT_FOUND


class AlreadyExistsError(OpError):
    error_code = ALREADY_EXISTS


class PermissionDeniedError(OpError):
    error_code = PERMISSION_DENIED


class UnauthenticatedError(OpError):
    error_code = UNAUTHENTICATED


class ResourceExhaustedError(OpError):
    error_code = RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError):
    error_code = FAILED_PRECONDITION


class AbortedError(OpError):
    error_code = ABORTED


class OutOfRangeError(OpError):
    error_code = OUT_OF_RANGE


class UnimplementedError(OpError):
    error_code = UNIMPLEMENTED


class InternalError(OpError):
    error_code = INTERNAL


class UnavailableError(OpError):
    error_code = UNAVAILABLE


class DataLossError(OpError):
    error_code = DATA_LOSS


class OperatorNotAllowedInGraphError(TypeError):
    """A symbolic tensor used where Python needs its value (`if t:`, `for x in t`), as TF names it."""


_BY_CODE = {cls.error_code: cls for cls in (
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, UnauthenticatedError, ResourceExhaustedError,
    FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError, InternalError,
    UnavailableError, DataLossError)}


def exception_type_from_error_code(error_code):
    """TF's: the OpError subclass of a status code; KeyError for a code without one."""
    return _BY_CODE[error_code]


def error_code_from_exception_type(cls):
    """TF's: the status code of an OpError subclass (UNKNOWN, with a warning, for another class)."""
    if cls in _BY_CODE.values():
        return cls.error_code
    import warnings
    warnings.warn("Unknown class exception")
    return UNKNOWN


def error_class(code):
    """The OpError subclass for a status code (UnknownError for codes we do not know)."""
    return _BY_CODE.get(code, UnknownError)


def from_code(code, message, **where):
    return error_class(code)(message, **where)


def is_derived(err):
    """True for errors that are a consequence of another failure in the same step
    (aborted or cancelled rendezvous), which lose to the root cause when reporting."""
    return getattr(err, "derived", False)


def mark_derived(err):
    err.derived = True
    return err
