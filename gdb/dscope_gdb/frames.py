"""dispatch-trace --frames: the dispatch chain rebuilt from GDB's stack (filled in by the loading work)."""
