"""The table companion: rules, game session, web page and the `companion` command."""

__version__ = "0.1.0"
