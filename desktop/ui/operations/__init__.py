"""User actions, one small function each: one core call off the GUI thread, then the UI follow-up.

Each takes the controller, runs the blocking vault call on the controller's
vault-write worker, re-indexes the touched notes, tells the panels, and sends
a failure to the error presenter. They return the task, so tests can await it.
"""
