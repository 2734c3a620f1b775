"""The stand-in model server: both model APIs on 127.0.0.1, every request logged."""
