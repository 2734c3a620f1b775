"""The lowest layer: the neutral conversation model and its words, pure data.

:mod:`~segue.model.conversation` (a session as provider-neutral items), its JSON codec
(:mod:`~segue.model.codec`), a session's listing row (:mod:`~segue.model.session_info`), the
errors every layer raises (:mod:`~segue.model.errors`), units, times and limit texts. It
imports nothing of segue's from above it.
"""
