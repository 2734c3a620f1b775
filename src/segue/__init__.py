"""segue: keep one coding-agent conversation alive across providers."""

__version__ = "0.1.0"
