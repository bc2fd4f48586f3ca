"""The Qt desktop application (PySide6 + qasync)."""
