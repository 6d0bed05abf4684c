"""Monitored training sessions (TF1's `tf.train.MonitoredTrainingSession` and friends):
hooks around every run, a Scaffold of init/ready/save ops, chief and non-chief
session creation, checkpoint restore on start, recovery from dead tasks."""
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues  # noqa: F401
from .scaffold import Scaffold  # noqa: F401
from .session_manager import SessionManager  # noqa: F401
from .basic_hooks import (FeedFnHook, FinalOpsHook, LoggingTensorHook, NanLossDuringTrainingError,  # noqa: F401
                          NanTensorHook, SecondOrStepTimer, StopAtStepHook)
from .io_hooks import (CheckpointSaverHook, CheckpointSaverListener, StepCounterHook, SummarySaverHook,  # noqa: F401
                       SummaryWriterCache)
from .monitored_session import (ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession,  # noqa: F401
                                SessionCreator, SingularMonitoredSession, WorkerSessionCreator)
