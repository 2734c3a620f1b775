"""This segue's version: what a store records beside each batch (``segue.__version__``)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
