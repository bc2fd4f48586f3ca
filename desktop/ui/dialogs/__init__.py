"""Dialogs: settings, review forms, backend warning."""
