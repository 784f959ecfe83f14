"""Mining training pairs from unlabelled text (``psp-st mine``); the modules: docs/architecture.md."""
