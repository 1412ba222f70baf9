"""The orchestrator and a run's life: `ReActLoop`, its entry points (run, start, stream,
resume), configuration, handles and streams, resuming stored runs, worker rounds, agents
as tools, caller-chosen run ids. Published by `reactloop`, `reactloop.phases`,
`reactloop.stores`, `reactloop.tools`.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._loop._agent_tool import AgentTool
from reactloop._loop._config import HOMES, OPTION_NAMES, LoopOptions, build_config
from reactloop._loop._handle import RunHandle, RunStream
from reactloop._loop._lifecycle import message
from reactloop._loop._loop import ReActLoop
from reactloop._loop._resume import ResumeOptions
from reactloop._loop._run import LoopConfig, Run
from reactloop._loop._run_ids import IfExists
from reactloop._loop._workers import resume_claimable, unpark_run

__all__ = [
    "HOMES",
    "OPTION_NAMES",
    "AgentTool",
    "IfExists",
    "LoopConfig",
    "LoopOptions",
    "ReActLoop",
    "ResumeOptions",
    "Run",
    "RunHandle",
    "RunStream",
    "build_config",
    "message",
    "resume_claimable",
    "unpark_run",
]
