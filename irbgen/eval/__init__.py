"""Evaluation of retrievers and LLMs on any irbgen benchmark directory."""
