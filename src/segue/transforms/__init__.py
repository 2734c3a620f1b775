"""Pure functions on :class:`~segue.model.conversation.Conversation`: no I/O, provider-neutral."""
