"""Gymnasium wrappers for agentworld-gym envs, named for what they change."""

from .chat import ChatMessagesObservation, ChatSpace
from .recording import RecordTrajectory, read_trajectories
from .sb3 import CandidateChoiceAction, HashedTranscriptObservation, candidate_actions, make_sb3_env
from .task_sampler import AdaptiveLevel, FixedLevel, LinearRamp, TaskSampler, make_schedule

__all__ = [
    "AdaptiveLevel", "CandidateChoiceAction", "ChatMessagesObservation", "ChatSpace", "FixedLevel", "HashedTranscriptObservation",
    "LinearRamp", "RecordTrajectory", "TaskSampler", "candidate_actions", "make_schedule", "make_sb3_env", "read_trajectories",
]
