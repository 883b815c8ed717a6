"""Runs a real agent client (Claude Code) against a scripted model stand-in; see README.md."""
