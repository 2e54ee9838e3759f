"""Fault scenarios (issue #12): a database outage, a slow or resetting database behind Toxiproxy, overload at
twice the measured capacity, and an instance killed with SIGKILL, each under a fixed arrival rate, bounded in
time, on loopback only. One job per module:

- scenarios.py: the four scenarios and their fault schedules
- injector.py: the actions (stop/start PostgreSQL, toxics, kill -9) and the timeline of events
- toxiproxy.py: the Toxiproxy server and its REST API
- timeline.py: per-request trace -> per-second series, error classes, recovery times
- invariants.py: no lost or duplicated bids after a scenario
- runner.py: one scenario run on the ordinary run machinery (harness/engine/session.py), stored like every run
- report.py: the terminal table per scenario
"""
