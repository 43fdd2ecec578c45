"""Stages over typed records, a checkpoint store, resume, rejects and per-stage stats."""
