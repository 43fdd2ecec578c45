"""irbgen: generate fresh question-answering and retrieval benchmarks on demand."""

__version__ = "0.1.0"
