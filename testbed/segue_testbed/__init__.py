"""segue's test bed: the stand-in model server, the drivers of the real CLIs, the fixture recorders.

Not part of the product: it lives next to testbed/package.json (the pinned CLIs) and is installed
only into a checkout's development environment."""
