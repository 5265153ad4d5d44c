"""The registry: every object, field, point function and assertion type of both formats, declared once."""
