"""Vision: frame sources, marker detection, the locator and the synthetic table renderer."""
