"""Runnable examples: custom phases (planning, reflection) and the offline demo agent."""
