"""File handling shared by the library and the CLI: atomic writes, line readers that report line numbers."""
