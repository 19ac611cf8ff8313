"""How findings are shown."""
