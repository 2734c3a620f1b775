"""Pure functions on :class:`~segue.conversation.Conversation`: no I/O, provider-neutral."""
