"""`graphrt.distribute` (also `tf.distribute`).

    pipeline.py   pipeline parallelism: GPipe and 1F1B schedules, bubble measured
"""
from .pipeline import Pipeline, bubble_fraction, pipeline, schedule_tasks, textbook_bubble  # noqa: F401
