"""What each provider is as a target: its configured model and limits."""
